// amt-job-shim: holds one training process and everything it starts (worker/job_shim.h).
#include "worker/job_shim.h"

int main(int argc, char** argv) { return amt::worker::RunJobShim(argc, argv); }
