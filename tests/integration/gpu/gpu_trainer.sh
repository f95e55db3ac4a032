#!/bin/sh
# The trainer of tests/integration/gpus_test.py (and of scripts/gpu-check.sh's dry run): says
# which GPUs the job sees, then, by its hyperparameter mode (SM_HP_MODE; SM_HP_MARKS a folder):
#   hold  takes each of its GPUs exclusively for 0.2 s (mkdir of <MARKS>/gpu<N>, atomic) and
#         fails, saying so, when another job holds one at the same time;
#   pair  marks its GPUs and waits (up to 60 s) until another job has marked the same GPU: two
#         jobs on one device at once, as --gpu-share 2 allows.
echo "gpus=[$CUDA_VISIBLE_DEVICES] n=$SM_NUM_GPUS"
devices=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' ' ')
MARKS=$SM_HP_MARKS
case "$SM_HP_MODE" in
  hold)
    for d in $devices; do
      if ! mkdir "$MARKS/gpu$d" 2>/dev/null; then
        echo "GPU $d is held by another job" > "$SM_OUTPUT_DIR/failure"
        exit 1
      fi
    done
    sleep 0.2
    for d in $devices; do rmdir "$MARKS/gpu$d"; done;;
  pair)
    for d in $devices; do touch "$MARKS/gpu$d.$TRAINING_JOB_NAME"; done
    tries=0
    while :; do
      others=$(ls "$MARKS" | grep -v "\.$TRAINING_JOB_NAME\$" | grep -c "^gpu")
      [ "$others" -gt 0 ] && break
      tries=$((tries + 1))
      if [ "$tries" -gt 1200 ]; then echo "no other job shared the GPU"; exit 1; fi
      sleep 0.05
    done
    echo "shared a GPU with another job";;
esac
echo "loss=1"
