#include "server/malloc_huge_pages.h"

#include <cstdlib>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "rpc/flag_file.h"

namespace sortd {
namespace {

constexpr absl::string_view kTunable = "glibc.malloc.hugetlb";

// The bracketed word of the kernel's mode line, or "" when there is none.
absl::string_view SelectedMode(absl::string_view line) {
  const size_t open = line.find('[');
  const size_t close = line.find(']', open);
  if (open == absl::string_view::npos || close == absl::string_view::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

// The tunable's value as written, or "" when GLIBC_TUNABLES does not name it (the last setting
// wins, as glibc reads them in order).
absl::string_view HugetlbValue(absl::string_view tunables) {
  absl::string_view value;
  for (absl::string_view item : absl::StrSplit(tunables, ':')) {
    if (absl::ConsumePrefix(&item, kTunable) && absl::ConsumePrefix(&item, "=")) value = item;
  }
  return value;
}

}  // namespace

std::string DescribeMallocHugePages(absl::string_view glibc_tunables,
                                    std::optional<absl::string_view> thp_enabled) {
  const absl::string_view value = HugetlbValue(glibc_tunables);
  const std::string setting = value.empty() ? std::string("GLIBC_TUNABLES does not set it")
                                            : absl::StrCat(kTunable, "=", value);
  if (!thp_enabled.has_value()) {
    return absl::StrCat("malloc huge pages: unknown (", setting,
                        "; no /sys/kernel/mm/transparent_hugepage/enabled)");
  }
  const absl::string_view mode = SelectedMode(*thp_enabled);
  if (mode == "always") {
    return "malloc huge pages: on (transparent huge pages: always)";
  }
  if (mode != "madvise") {
    return absl::StrCat("malloc huge pages: off (transparent huge pages: ",
                        mode.empty() ? absl::string_view("unknown") : mode, ")");
  }
  if (!value.empty() && value != "0") {
    return absl::StrCat("malloc huge pages: on (", setting, ", transparent huge pages: madvise)");
  }
  return absl::StrCat("WARNING: malloc huge pages: off (", setting,
                      ", transparent huge pages: madvise): buffers of large requests fault in "
                      "4 KiB pages; set GLIBC_TUNABLES=",
                      kTunable, "=1 as scripts/start.sh and the container image do");
}

std::string DescribeMallocHugePagesHere() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const absl::StatusOr<std::string> mode =
      ReadFlagFile("transparent huge pages", "/sys/kernel/mm/transparent_hugepage/enabled");
  std::optional<absl::string_view> thp_enabled;
  if (mode.ok()) thp_enabled = *mode;
  return DescribeMallocHugePages(tunables == nullptr ? "" : tunables, thp_enabled);
}

}  // namespace sortd
