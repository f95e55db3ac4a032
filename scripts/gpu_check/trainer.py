"""The trainer of scripts/gpu_check.py: a PyTorch job that says which GPUs it sees and puts a
tensor on each, then, by mode, holds its GPUs exclusively for a while
(mkdir <MARKS>/gpu<N> is atomic: a second holder fails) or waits until another job has marked
the same GPU (--gpu-share 2). mode and marks are hyperparameters (SM_HP_MODE, SM_HP_MARKS).
Without CUDA (a dry run with a stand-in nvidia-smi) it only says.
"""
import os
import sys
import time

import torch

visible = os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>")
devices = [d for d in visible.split(",") if d] if visible != "<unset>" else []
cuda = torch.cuda.device_count() if torch.cuda.is_available() else 0
print("visible=[%s] SM_NUM_GPUS=%s cuda_devices=%d" % (visible, os.environ.get("SM_NUM_GPUS"),
                                                       cuda), flush=True)
tensors = [torch.ones(1 << 20, device="cuda:%d" % i) for i in range(cuda)]
for i, t in enumerate(tensors):
    print("cuda:%d is %s, sum %d" % (i, torch.cuda.get_device_name(i), int(t.sum().item())),
          flush=True)
marks = os.environ.get("SM_HP_MARKS", "")
name = os.environ["TRAINING_JOB_NAME"]
mode = os.environ.get("SM_HP_MODE", "")
if mode == "hold":
    for d in devices:
        try:
            os.mkdir(os.path.join(marks, "gpu" + d))
        except FileExistsError:
            with open(os.path.join(os.environ["SM_OUTPUT_DIR"], "failure"), "w") as f:
                f.write("GPU %s is held by another job" % d)
            sys.exit(1)
    time.sleep(1.0)
    for d in devices:
        os.rmdir(os.path.join(marks, "gpu" + d))
elif mode == "pair":
    for d in devices:
        open(os.path.join(marks, "gpu%s.%s" % (d, name)), "w").close()
    deadline = time.monotonic() + 60
    while not any(m.startswith("gpu") and not m.endswith("." + name) for m in os.listdir(marks)):
        if time.monotonic() > deadline:
            print("no other job shared the GPU", flush=True)
            sys.exit(1)
        time.sleep(0.05)
    print("shared a GPU with another job", flush=True)
print("loss=1", flush=True)
