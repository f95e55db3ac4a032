// GrpcAuth: who may call amtd's gRPC services. Without credentials, everyone (amtd listens on
// loopback, or was told --insecure). With them (amtd --credentials FILE), a call must carry a valid
// x-amt-credential (common/grpc_credential.h) made from a key of that file, and a worker's key
// must be of the amt-worker profile when the file has one, so an API client cannot register as a
// worker (and receive the next job's hyperparameters and Environment).
#ifndef AMT_ORCHESTRATOR_API_GRPC_AUTH_H_
#define AMT_ORCHESTRATOR_API_GRPC_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <memory>

#include "common/credentials.h"

namespace amt::api {

class GrpcAuth {
 public:
  // nullptr: every call is allowed.
  explicit GrpcAuth(std::shared_ptr<const auth::Credentials> credentials = nullptr)
      : credentials_(std::move(credentials)) {}

  // OK, or UNAUTHENTICATED with the reason (missing, malformed, unknown key, expired, wrong
  // signature).
  grpc::Status CheckClient(const grpc::ServerContext& context) const;
  // CheckClient, then PERMISSION_DENIED for a key outside the amt-worker profile when the file
  // has that profile.
  grpc::Status CheckWorker(const grpc::ServerContext& context) const;

 private:
  // The verified key id ("" when there are no credentials), or the refusal.
  grpc::Status Verify(const grpc::ServerContext& context, std::string* key_id) const;

  std::shared_ptr<const auth::Credentials> credentials_;
};

}  // namespace amt::api

#endif  // AMT_ORCHESTRATOR_API_GRPC_AUTH_H_
