// The files of the web page (web/), built into amtd by web/embed.cmake: served by the gateway
// (orchestrator/gateway/web_page.h) under /ui/.
#ifndef AMT_WEB_WEB_ASSETS_H_
#define AMT_WEB_WEB_ASSETS_H_

#include <span>
#include <string_view>

namespace amt::web {

struct Asset {
  std::string_view path;          // under /ui/: "index.html", "app.js", ...
  std::string_view content_type;  // "text/javascript; charset=utf-8", ...
  std::string_view body;
};

// Every file of the page.
std::span<const Asset> Assets();

// The file at `path` (under /ui/), or null.
const Asset* FindAsset(std::string_view path);

}  // namespace amt::web

#endif  // AMT_WEB_WEB_ASSETS_H_
