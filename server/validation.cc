#include "server/validation.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"

namespace sortd {
namespace {

absl::StatusOr<KeyType> KeyTypeFromProto(int type) {
  if (std::optional<KeyType> t = FromProtoKeyType(type)) return *t;
  if (type == v1::KEY_TYPE_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        "key_type: unspecified; set one of KEY_TYPE_UINT32, KEY_TYPE_INT32, KEY_TYPE_FLOAT32, "
        "KEY_TYPE_UINT64, KEY_TYPE_INT64, KEY_TYPE_FLOAT64");
  }
  return absl::InvalidArgumentError(absl::StrCat("key_type: unknown value ", type));
}

absl::StatusOr<Algorithm> AlgorithmFromProto(int algorithm) {
  if (std::optional<Algorithm> a = FromProtoAlgorithm(algorithm)) return *a;
  return absl::InvalidArgumentError(absl::StrCat("algorithm: unknown value ", algorithm));
}

// Region ranges: where they lie and how large they are; that the regions exist and hold them is
// checked when they are attached (server/region_request.cc).
absl::Status CheckRange(const v1::RegionRange& range, const char* field, size_t expected_bytes) {
  if (range.region().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".region: empty; name a region"));
  }
  if (range.offset() > UINT64_MAX - range.byte_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": offset ", range.offset(), " + byte_size ", range.byte_size(), " overflows"));
  }
  if (range.byte_size() != expected_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".byte_size: ", range.byte_size(),
                                                   ", but the result needs ", expected_bytes,
                                                   " bytes"));
  }
  return absl::OkStatus();
}

// True for descending.
absl::StatusOr<bool> DescendingFromProto(int order) {
  if (order != v1::SORT_ORDER_ASCENDING && order != v1::SORT_ORDER_DESCENDING) {
    return absl::InvalidArgumentError(absl::StrCat("order: unknown value ", order));
  }
  return order == v1::SORT_ORDER_DESCENDING;
}

absl::Status CheckValueWidth(uint32_t value_width) {
  if (value_width == 0 || value_width == 4 || value_width == 8) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("value_width: ", value_width, " is not supported; use 0 (no values), 4 or 8"));
}

absl::Status CheckTranspositionCap(const SortSpec& spec, size_t n, const ValidationLimits& limits) {
  if (spec.algorithm != Algorithm::kOddEvenTransposition || n <= limits.transposition_cap) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "algorithm: ODD_EVEN_TRANSPOSITION does O(n^2) work and is capped at ",
      limits.transposition_cap, " keys on this server (--transposition_cap); this request has ", n,
      " keys: use RADIX or AUTO"));
}

bool Overlap(const v1::RegionRange& a, const v1::RegionRange& b) {
  return a.region() == b.region() && a.byte_size() > 0 && b.byte_size() > 0 &&
         a.offset() < b.offset() + b.byte_size() && b.offset() < a.offset() + a.byte_size();
}

bool SameRange(const v1::RegionRange& a, const v1::RegionRange& b) {
  return a.region() == b.region() && a.offset() == b.offset() && a.byte_size() == b.byte_size();
}

// The rules of the shared-memory form (sortd.proto, SortRequest.keys_region): outputs present
// exactly when their results are, of exactly their size, and overlapping nothing but, exactly,
// their own input (in place).
absl::Status CheckRegionRanges(const v1::SortRequest& request, const ValidatedJob& job) {
  const SortSpec& spec = job.spec;
  const size_t n = job.n;
  struct Named {
    const char* field;
    const v1::RegionRange* range;
    const v1::RegionRange* own_input;
  };
  std::vector<Named> inputs = {{"keys_region", &request.keys_region(), nullptr}};
  if (spec.value_width != 0) {
    if (!request.has_values_region()) {
      return absl::InvalidArgumentError(absl::StrCat("values_region: missing; value_width is ",
                                                     spec.value_width, " (set 0 for no values)"));
    }
    if (absl::Status s = CheckRange(request.values_region(), "values_region", n * spec.value_width);
        !s.ok()) {
      return s;
    }
    inputs.push_back({"values_region", &request.values_region(), nullptr});
  } else if (request.has_values_region()) {
    return absl::InvalidArgumentError("values_region: set, but value_width is 0");
  }
  std::vector<Named> outputs;
  const auto output = [&](bool wanted, bool present, const v1::RegionRange& range,
                          const char* field, size_t bytes,
                          const v1::RegionRange* own) -> absl::Status {
    if (!wanted && present) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": set, but there is no such result"));
    }
    if (!wanted) return absl::OkStatus();
    if (!present) return absl::InvalidArgumentError(absl::StrCat(field, ": missing"));
    if (absl::Status s = CheckRange(range, field, bytes); !s.ok()) return s;
    outputs.push_back({field, &range, own});
    return absl::OkStatus();
  };
  absl::Status s = output(true, request.has_out_keys_region(), request.out_keys_region(),
                          "out_keys_region", n * KeyWidth(spec.key_type), &request.keys_region());
  if (s.ok()) {
    s = output(spec.value_width != 0, request.has_out_values_region(), request.out_values_region(),
               "out_values_region", n * spec.value_width, &request.values_region());
  }
  if (s.ok()) {
    s = output(spec.return_indices, request.has_out_indices_region(), request.out_indices_region(),
               "out_indices_region", n * 4, nullptr);
  }
  if (!s.ok()) return s;
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (const Named& in : inputs) {
      const bool in_place =
          in.range == outputs[i].own_input && SameRange(*in.range, *outputs[i].range);
      if (!in_place && Overlap(*in.range, *outputs[i].range)) {
        return absl::InvalidArgumentError(
            absl::StrCat(outputs[i].field, ": overlaps ", in.field,
                         "; an output may only be exactly its own input's range (in place)"));
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (Overlap(*outputs[j].range, *outputs[i].range)) {
        return absl::InvalidArgumentError(
            absl::StrCat(outputs[i].field, ": overlaps ", outputs[j].field));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ValidatedJob> ValidateSortRequest(const SortRequestShape& shape,
                                                 const ValidationLimits& limits) {
  const v1::SortRequest& request = shape.fields;
  ValidatedJob job;
  SortSpec& spec = job.spec;
  auto key_type = KeyTypeFromProto(request.key_type());
  if (!key_type.ok()) return key_type.status();
  spec.key_type = *key_type;
  auto algorithm = AlgorithmFromProto(request.algorithm());
  if (!algorithm.ok()) return algorithm.status();
  spec.algorithm = *algorithm;
  absl::StatusOr<bool> descending = DescendingFromProto(request.order());
  if (!descending.ok()) return descending.status();
  spec.descending = *descending;
  spec.stable = request.stable();
  spec.return_indices = request.return_indices();

  const size_t width = KeyWidth(spec.key_type);
  job.shared_memory = request.has_keys_region();
  if (!job.shared_memory && (request.has_values_region() || request.has_out_keys_region() ||
                             request.has_out_values_region() || request.has_out_indices_region())) {
    return absl::InvalidArgumentError(
        "keys_region: missing, but other *_region fields are set; name every array by region, "
        "or none");
  }
  if (job.shared_memory && (shape.key_bytes != 0 || shape.value_bytes != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "keys and values: ", shape.key_bytes, " and ", shape.value_bytes,
        " bytes were sent, but keys_region is set; send the arrays in regions or in bytes, not "
        "both"));
  }
  if (job.shared_memory && request.keys_region().byte_size() > SIZE_MAX / 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "keys_region.byte_size: ", request.keys_region().byte_size(), " is not a size"));
  }
  const size_t key_bytes =
      job.shared_memory ? static_cast<size_t>(request.keys_region().byte_size()) : shape.key_bytes;
  if (key_bytes % width != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("keys: ", key_bytes, " bytes is not a multiple of the ",
                     KeyTypeName(spec.key_type), " key width (", width, " bytes)"));
  }
  job.n = key_bytes / width;

  const uint32_t vw = request.value_width();
  if (absl::Status st = CheckValueWidth(vw); !st.ok()) return st;
  spec.value_width = vw;
  const size_t value_bytes = job.shared_memory ? job.n * vw : shape.value_bytes;
  if (vw == 0 && value_bytes != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("values: ", value_bytes,
                     " bytes were sent but value_width is 0; set value_width to 4 or 8"));
  }
  if (vw != 0 && value_bytes != job.n * vw) {
    return absl::InvalidArgumentError(absl::StrCat("values: ", value_bytes, " bytes, but ", job.n,
                                                   " keys x value_width ", vw, " = ", job.n * vw,
                                                   " bytes"));
  }

  if (job.n > limits.max_keys) {
    return absl::ResourceExhaustedError(
        absl::StrCat("keys: ", job.n, " keys exceed this server's limit of ", limits.max_keys,
                     " per request (--max_request_keys)"));
  }
  if (job.shared_memory) {
    if (absl::Status st = CheckRange(request.keys_region(), "keys_region", key_bytes); !st.ok()) {
      return st;
    }
    if (absl::Status st = CheckRegionRanges(request, job); !st.ok()) return st;
  }
  // A region-backed request carries no bytes, so the message-size limits do not apply to it.
  if (!job.shared_memory && key_bytes + value_bytes > limits.max_request_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "keys + values: ", key_bytes + value_bytes, " bytes exceed this server's limit of ",
        limits.max_request_bytes, " bytes per request (--max_request_bytes)"));
  }
  const size_t response_bytes = job.n * ResultBytesPerKey(spec);
  if (!job.shared_memory && response_bytes > kMaxResponseBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the response would be ", response_bytes, " bytes (keys + values + indices), over the ",
        kMaxResponseBytes, "-byte limit of one protobuf message; split the request"));
  }
  if (absl::Status st = CheckTranspositionCap(spec, job.n, limits); !st.ok()) return st;
  return job;
}

absl::StatusOr<ValidatedStream> ValidateStreamHeader(const v1::SortStreamHeader& header,
                                                     const ValidationLimits& limits) {
  ValidatedStream stream;
  SortSpec& spec = stream.spec;
  auto key_type = KeyTypeFromProto(header.key_type());
  if (!key_type.ok()) return key_type.status();
  spec.key_type = *key_type;
  auto algorithm = AlgorithmFromProto(header.algorithm());
  if (!algorithm.ok()) return algorithm.status();
  spec.algorithm = *algorithm;
  absl::StatusOr<bool> descending = DescendingFromProto(header.order());
  if (!descending.ok()) return descending.status();
  spec.descending = *descending;
  spec.stable = header.stable();
  spec.return_indices = header.return_indices();
  if (absl::Status st = CheckValueWidth(header.value_width()); !st.ok()) return st;
  spec.value_width = header.value_width();
  if (header.key_count() > limits.max_stream_keys) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "header.key_count: ", header.key_count(), " keys exceed this server's limit of ",
        limits.max_stream_keys, " per stream (--max_stream_keys)"));
  }
  if (spec.return_indices && header.key_count() > (uint64_t{1} << 32)) {
    return absl::InvalidArgumentError(absl::StrCat("header.key_count: ", header.key_count(),
                                                   " keys, but indices are uint32: at most 2^32 "
                                                   "keys with return_indices"));
  }
  stream.n = static_cast<size_t>(header.key_count());
  if (absl::Status st = CheckTranspositionCap(spec, stream.n, limits); !st.ok()) return st;
  const size_t per_key = ResultBytesPerKey(spec);
  const uint64_t chunk = header.response_chunk_keys();
  if (chunk > limits.max_request_bytes / per_key) {
    return absl::InvalidArgumentError(
        absl::StrCat("header.response_chunk_keys: ", chunk, " keys of ", per_key,
                     " result bytes each exceed this server's --max_request_bytes (",
                     limits.max_request_bytes, ") per message"));
  }
  stream.response_chunk_keys =
      chunk != 0 ? static_cast<size_t>(chunk)
                 : std::max<size_t>(
                       1, std::min(kDefaultResponseChunkBytes, limits.max_request_bytes) / per_key);
  return stream;
}

}  // namespace sortd
