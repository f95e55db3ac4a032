"""amt_local: amt-local's amtd (a local SageMaker Automatic Model Tuning) for Python tests.

    import amt_local

    with amt_local.start(image_map="image-map.json", time_scale=0.01) as amtd:
        sm = amtd.client("sagemaker")          # boto3 at amtd.url, keys amtd accepts
        os.environ.update(amtd.env)             # or: the SDK, the aws cli, `amt` (amt env's exports)

`start()` runs amtd (found through AMT_BIN, the folder of amtd, amt-worker and amt, else PATH) on
free ports (--port 0) with a temporary data dir; the end of the `with`, also when its body raises,
stops amtd (SIGTERM, then SIGKILL) and removes the folder. With pytest, the `amtd` fixture of
amt_local.pytest_plugin (loaded by itself once the package is installed) does the same once per
session: docs/pytest.md.

Standard library only (boto3 is imported by Amtd.client() alone); Linux (pidfd), Python 3.9+.
amt-local's own tests use the same module from the source tree (python/src on sys.path).
"""

from amt_local._amtd import (Amtd, AmtdError, AmtdExited, AmtdNotFound, Banner, find_bin_dir,
                             parse_banner, start)
from amt_local._process import Process

__all__ = ["Amtd", "AmtdError", "AmtdExited", "AmtdNotFound", "Banner", "Process", "find_bin_dir",
           "parse_banner", "start"]
__version__ = "0.1.0"
