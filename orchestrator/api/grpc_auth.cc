#include "orchestrator/api/grpc_auth.h"

#include <chrono>
#include <string>

#include "common/grpc_credential.h"

namespace amt::api {

grpc::Status GrpcAuth::Verify(const grpc::ServerContext& context, std::string* key_id) const {
  if (credentials_ == nullptr) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find(auth::kGrpcCredentialMetadata);
  const std::string value =
      it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  auto verified = auth::VerifyGrpcCredential(value, *credentials_, now);
  if (!verified.ok()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        std::string(verified.status().message()));
  }
  *key_id = std::move(*verified);
  return grpc::Status::OK;
}

grpc::Status GrpcAuth::CheckClient(const grpc::ServerContext& context) const {
  std::string key_id;
  return Verify(context, &key_id);
}

grpc::Status GrpcAuth::CheckWorker(const grpc::ServerContext& context) const {
  std::string key_id;
  if (grpc::Status status = Verify(context, &key_id); !status.ok()) return status;
  if (credentials_ == nullptr || credentials_->KeyIdOfProfile(auth::kWorkerProfile).empty()) {
    return grpc::Status::OK;
  }
  if (credentials_->Find(key_id)->profile != auth::kWorkerProfile) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "only a key of the credentials file's [" +
                            std::string(auth::kWorkerProfile) + "] profile may register a worker");
  }
  return grpc::Status::OK;
}

}  // namespace amt::api
