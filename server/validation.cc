#include "server/validation.h"

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
  if (request.order() != v1::SORT_ORDER_ASCENDING && request.order() != v1::SORT_ORDER_DESCENDING) {
    return absl::InvalidArgumentError(absl::StrCat("order: unknown value ", request.order()));
  }
  spec.descending = request.order() == v1::SORT_ORDER_DESCENDING;
  spec.stable = request.stable();
  spec.return_indices = request.return_indices();

  const size_t width = KeyWidth(spec.key_type);
  const size_t key_bytes = shape.key_bytes;
  if (key_bytes % width != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("keys: ", key_bytes, " bytes is not a multiple of the ",
                     KeyTypeName(spec.key_type), " key width (", width, " bytes)"));
  }
  job.n = key_bytes / width;

  const uint32_t vw = request.value_width();
  if (vw != 0 && vw != 4 && vw != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("value_width: ", vw, " is not supported; use 0 (no values), 4 or 8"));
  }
  spec.value_width = vw;
  const size_t value_bytes = shape.value_bytes;
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
  if (key_bytes + value_bytes > limits.max_request_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "keys + values: ", key_bytes + value_bytes, " bytes exceed this server's limit of ",
        limits.max_request_bytes, " bytes per request (--max_request_bytes)"));
  }
  const size_t response_bytes = job.n * ResultBytesPerKey(spec);
  if (response_bytes > kMaxResponseBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the response would be ", response_bytes, " bytes (keys + values + indices), over the ",
        kMaxResponseBytes, "-byte limit of one protobuf message; split the request"));
  }
  if (spec.algorithm == Algorithm::kOddEvenTransposition && job.n > limits.transposition_cap) {
    return absl::InvalidArgumentError(absl::StrCat(
        "algorithm: ODD_EVEN_TRANSPOSITION does O(n^2) work and is capped at ",
        limits.transposition_cap, " keys on this server (--transposition_cap); this request has ",
        job.n, " keys: use RADIX or AUTO"));
  }
  return job;
}

}  // namespace sortd
