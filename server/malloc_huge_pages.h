// What the start-up log says of malloc and transparent huge pages (docs/operations.md,
// GLIBC_TUNABLES): without them a 16M-key request's buffers fault in 4 KiB pages, which on some
// VMs is most of the sort, and nothing else would tell an operator who starts sortd by hand.
#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace sortd {

// One log line. `glibc_tunables`: the GLIBC_TUNABLES variable (empty when unset);
// `thp_enabled`: /sys/kernel/mm/transparent_hugepage/enabled ("always [madvise] never"), or
// nullopt where it cannot be read. Starts with "WARNING: " where the tunable would help.
std::string DescribeMallocHugePages(absl::string_view glibc_tunables,
                                    std::optional<absl::string_view> thp_enabled);

// The same for this process and host.
std::string DescribeMallocHugePagesHere();

}  // namespace sortd
