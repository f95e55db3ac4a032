#include "web/web_assets.h"

namespace amt::web {

const Asset* FindAsset(std::string_view path) {
  for (const Asset& asset : Assets()) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

}  // namespace amt::web
