// WorkerStream and StreamConnector: the agent's view of WorkerService.Connect, so the agent logic
// runs in tests without a gRPC server. The gRPC implementation is in grpc_connector.h.
#ifndef AMT_WORKER_WORKER_STREAM_H_
#define AMT_WORKER_WORKER_STREAM_H_

#include <memory>

#include "absl/status/statusor.h"
#include "amt/v1/worker.pb.h"

namespace amt::worker {

// One open WorkerService.Connect stream. Destroying it ends the call.
class WorkerStream {
 public:
  virtual ~WorkerStream() = default;

  // Blocks for the next message from amtd; false once the stream has ended (amtd gone, the
  // connection lost, or Cancel()). Called from one thread (the agent thread).
  virtual bool Read(amt::v1::OrchestratorMessage* message) = 0;

  // Sends one message; false when the stream is broken. Callers serialise Write calls; one
  // Write may run concurrently with one Read.
  virtual bool Write(const amt::v1::WorkerMessage& message) = 0;

  // Ends the stream: a blocked or later Read returns false. Thread-safe, callable any time.
  virtual void Cancel() = 0;

  // After Read returned false: how amtd ended the call. OK when it simply ended or the
  // connection was lost; the code and message of a refusal (ALREADY_EXISTS for a worker id in
  // use, UNAUTHENTICATED or PERMISSION_DENIED for credentials, INVALID_ARGUMENT). Called once,
  // from the agent thread, before Cancel.
  virtual absl::Status Finish() = 0;
};

class StreamConnector {
 public:
  virtual ~StreamConnector() = default;

  // Opens a new stream to amtd. Unavailable when it cannot be reached. May block for a short
  // while (the gRPC connector waits up to 1 s for the channel). Called from the agent thread.
  virtual absl::StatusOr<std::unique_ptr<WorkerStream>> Connect() = 0;
};

}  // namespace amt::worker

#endif  // AMT_WORKER_WORKER_STREAM_H_
