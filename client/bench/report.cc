#include "client/bench/report.h"

#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace sortd::bench {
namespace {

struct Quantile {
  const char* name;
  double q;
};
// A dispatcher on the CPU this much of the run barely waited for slots or due times: the offered
// load was probably bounded by the tester, not by the server.
constexpr double kTesterBoundBusy = 0.9;

constexpr Quantile kQuantiles[] = {{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}, {"p99.9", 0.999}};

// 12.3 M, 456.7 k: rates of very different sizes stay readable.
std::string Human(double x) {
  if (x >= 1e9) return absl::StrFormat("%.2f G", x / 1e9);
  if (x >= 1e6) return absl::StrFormat("%.2f M", x / 1e6);
  if (x >= 1e3) return absl::StrFormat("%.2f k", x / 1e3);
  return absl::StrFormat("%.1f", x);
}

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string CsvField(absl::string_view s) {
  if (s.find_first_of(",\"\n") == absl::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string LatencyJson(const LatencyHistogram& h) {
  std::vector<std::string> fields;
  for (const Quantile& q : kQuantiles) {
    fields.push_back(absl::StrFormat("\"%s_ms\": %.4f", q.name, Ms(h.Percentile(q.q))));
  }
  fields.push_back(absl::StrFormat("\"max_ms\": %.4f", Ms(h.max())));
  fields.push_back(absl::StrFormat("\"mean_ms\": %.4f", h.mean() / 1e6));
  fields.push_back(absl::StrFormat("\"count\": %d", h.count()));
  return absl::StrCat("{", absl::StrJoin(fields, ", "), "}");
}

std::string LatencyRow(const char* label, const LatencyHistogram& h) {
  std::string row = absl::StrFormat("    %-12s", label);
  for (const Quantile& q : kQuantiles) absl::StrAppendFormat(&row, "%10.3f", Ms(h.Percentile(q.q)));
  absl::StrAppendFormat(&row, "%10.3f%10.3f\n", Ms(h.max()), h.mean() / 1e6);
  return row;
}

std::string LoopName(const BenchOptions& o) {
  if (o.rate <= 0) return "closed";
  return absl::StrFormat("open %s %g/s", o.arrival == Arrival::kPoisson ? "poisson" : "constant",
                         o.rate);
}

// "none", "tls" (the server's certificate verified) or "mtls" (a client certificate too).
const char* TlsName(const BenchOptions& o) {
  if (!o.tls.enabled()) return "none";
  return o.tls.cert_file.empty() ? "tls" : "mtls";
}

}  // namespace

std::string DescribeLoad(const BenchOptions& o) {
  return absl::StrCat(
      o.echo ? "echo " : "sort ", KeyTypeName(o.key_type),
      o.value_width ? absl::StrCat("+v", o.value_width) : "", " ", SizeSpecName(o.sizes), " ",
      LoopName(o), " c", o.concurrency, " m", o.channels, " d", EffectiveDispatchers(o),
      o.shared_memory || o.stream || o.session ? absl::StrCat(" ", TransportName(o)) : "",
      o.tls.enabled() ? absl::StrCat(" ", TlsName(o)) : "");
}

std::string FormatTextReport(const BenchResult& r) {
  const BenchOptions& o = r.options;
  std::string out;
  absl::StrAppendFormat(&out, "sortctl bench: %s against %s%s\n",
                        o.echo      ? "Diagnostics/Echo (transport ceiling)"
                        : o.session ? "SortSession"
                                    : "SortKeys",
                        o.target, o.lb_policy.empty() ? "" : absl::StrCat(" (", o.lb_policy, ")"));
  absl::StrAppendFormat(
      &out, "  transport  %s: %s%s%s\n", TransportName(o),
      o.shared_memory ? absl::StrCat("arrays in one region per slot in ", o.shm_dir,
                                     ", outputs in separate ranges")
      : o.stream
          ? absl::StrCat("SortStream, chunks of ", o.stream_options.chunk_bytes,
                         " bytes of keys up, ",
                         o.stream_options.response_chunk_keys == 0
                             ? std::string("the server's chunks")
                             : absl::StrCat(o.stream_options.response_chunk_keys, " keys a chunk"),
                         " back")
          : "arrays in the gRPC messages",
      o.session ? absl::StrCat("; each slot's requests the messages of one SortSession call (",
                               r.sessions_opened, " opened)")
                : "",
      !o.tls.enabled()          ? ""
      : o.tls.cert_file.empty() ? ", over TLS"
                                : ", over mutual TLS");
  const std::string loop =
      o.rate > 0 ? absl::StrFormat("open loop, %s arrivals at %g/s",
                                   o.arrival == Arrival::kPoisson ? "poisson" : "constant", o.rate)
                 : "closed loop";
  const int dispatchers = EffectiveDispatchers(o);
  absl::StrAppendFormat(
      &out, "  load       %s, at most %d in flight over %d channel%s, %d dispatcher%s\n", loop,
      o.concurrency, o.channels, o.channels == 1 ? "" : "s", dispatchers,
      dispatchers == 1 ? "" : "s");
  absl::StrAppendFormat(
      &out,
      "  requests   keys %s, values %d B, sizes %s (%d distinct, mean %.0f keys), order %s%s%s, "
      "algorithm %s, seed %d%s\n",
      KeyTypeName(o.key_type), o.value_width, SizeSpecName(o.sizes), r.distinct_requests,
      r.mean_request_keys, o.descending ? "desc" : "asc", o.stable ? ", stable" : "",
      o.return_indices ? ", indices" : "", v1::Algorithm_Name(o.algorithm), o.seed,
      o.verify ? "" : ", NOT VERIFIED");
  absl::StrAppendFormat(&out, "  warm-up    %s (%d requests, not counted%s)\n",
                        absl::FormatDuration(o.warmup), r.warmup_requests,
                        r.warmup_errors ? absl::StrCat("; ", r.warmup_errors, " FAILED") : "");
  absl::StrAppendFormat(&out, "  measured   %.3f s: %d ok, %d errors\n",
                        absl::ToDoubleSeconds(r.measured), r.ok, r.errors());
  absl::StrAppendFormat(
      &out, "  throughput %.1f requests/s, %s keys/s, %.2f MB/s (keys+values sent)\n",
      r.requests_per_second(), Human(r.keys_per_second()), r.megabytes_per_second());
  absl::StrAppendFormat(
      &out,
      "  client     busiest dispatcher on the CPU %.0f%% of the run; %.1f us client CPU/request\n",
      100 * r.busiest_dispatcher, r.client_cpu_us_per_request());
  if (r.busiest_dispatcher >= kTesterBoundBusy) {
    out += "             THE LOAD GENERATOR MAY BE THE LIMIT: add --dispatchers (and --channels)\n";
  }
  out += "  latency ms        p50       p90       p99     p99.9       max      mean\n";
  if (o.rate > 0) {
    out += LatencyRow("corrected", r.corrected);
    out += LatencyRow("uncorrected", r.uncorrected);
    const std::string slots =
        dispatchers == 1
            ? absl::StrFormat("all --concurrency=%d slots busy", o.concurrency)
            : absl::StrFormat("all slots of their dispatcher busy, --concurrency=%d split over %d",
                              o.concurrency, dispatchers);
    absl::StrAppendFormat(&out,
                          "    (corrected: from each request's due time; %d of %d requests went "
                          "out late, %s)\n",
                          r.late_sends, r.ok + r.errors(), slots);
  } else {
    out += LatencyRow("", r.corrected);
  }
  if (!r.served_by.empty()) {
    std::vector<std::string> parts;
    for (const auto& [where, count] : r.served_by)
      parts.push_back(absl::StrCat(where, ": ", count));
    absl::StrAppend(&out, "  served by  ", absl::StrJoin(parts, ", "), "\n");
  }
  if (r.errors_by_code.empty()) {
    out += "  errors     none\n";
  } else {
    out += "  errors by code\n";
    for (const auto& [code, count] : r.errors_by_code) {
      absl::StrAppendFormat(&out, "    %-20s %8d  first: %s\n", code, count,
                            r.first_error_message.at(code));
    }
  }
  return out;
}

std::string FormatJsonReport(const BenchResult& r) {
  const BenchOptions& o = r.options;
  std::vector<std::string> f;
  f.push_back(absl::StrCat("\"rpc\": ", JsonString(o.echo ? "echo" : "sort")));
  f.push_back(absl::StrCat("\"target\": ", JsonString(o.target)));
  f.push_back(absl::StrCat("\"transport\": ", JsonString(TransportName(o))));
  if (o.stream) {
    f.push_back(absl::StrCat("\"chunk_bytes\": ", o.stream_options.chunk_bytes));
    f.push_back(absl::StrCat("\"response_chunk_keys\": ", o.stream_options.response_chunk_keys));
  }
  if (o.session) f.push_back(absl::StrCat("\"sessions_opened\": ", r.sessions_opened));
  f.push_back(absl::StrCat("\"lb_policy\": ", JsonString(o.lb_policy)));
  f.push_back(absl::StrCat("\"tls\": ", JsonString(TlsName(o))));
  f.push_back(absl::StrCat("\"loop\": ", JsonString(o.rate > 0 ? "open" : "closed")));
  f.push_back(absl::StrFormat("\"rate\": %g", o.rate));
  f.push_back(absl::StrCat("\"arrival\": ",
                           JsonString(o.arrival == Arrival::kPoisson ? "poisson" : "constant")));
  f.push_back(absl::StrFormat("\"concurrency\": %d, \"channels\": %d, \"dispatchers\": %d",
                              o.concurrency, o.channels, EffectiveDispatchers(o)));
  f.push_back(absl::StrCat("\"key_type\": ", JsonString(KeyTypeName(o.key_type))));
  f.push_back(absl::StrFormat("\"value_width\": %d", o.value_width));
  f.push_back(absl::StrCat("\"sizes\": ", JsonString(SizeSpecName(o.sizes))));
  f.push_back(absl::StrFormat("\"mean_request_keys\": %.1f", r.mean_request_keys));
  f.push_back(absl::StrCat("\"order\": ", JsonString(o.descending ? "desc" : "asc")));
  f.push_back(absl::StrFormat("\"stable\": %s, \"indices\": %s, \"verified\": %s",
                              o.stable ? "true" : "false", o.return_indices ? "true" : "false",
                              o.verify ? "true" : "false"));
  f.push_back(absl::StrCat("\"algorithm\": ", JsonString(v1::Algorithm_Name(o.algorithm))));
  f.push_back(absl::StrFormat("\"seed\": %d", o.seed));
  f.push_back(absl::StrFormat("\"warmup_s\": %.3f, \"warmup_requests\": %d, \"warmup_errors\": %d",
                              absl::ToDoubleSeconds(o.warmup), r.warmup_requests, r.warmup_errors));
  f.push_back(absl::StrFormat("\"measured_s\": %.4f", absl::ToDoubleSeconds(r.measured)));
  f.push_back(absl::StrFormat("\"requests_ok\": %d, \"errors\": %d", r.ok, r.errors()));
  f.push_back(absl::StrFormat("\"requests_per_s\": %.2f, \"keys_per_s\": %.1f, \"mb_per_s\": %.3f",
                              r.requests_per_second(), r.keys_per_second(),
                              r.megabytes_per_second()));
  f.push_back(absl::StrCat("\"latency_ms\": ", LatencyJson(r.corrected)));
  f.push_back(absl::StrCat("\"uncorrected_latency_ms\": ", LatencyJson(r.uncorrected)));
  f.push_back(absl::StrFormat("\"late_sends\": %d", r.late_sends));
  f.push_back(absl::StrFormat(
      "\"busiest_dispatcher\": %.3f, \"client_cpu_s\": %.3f, \"client_cpu_us_per_request\": %.2f",
      r.busiest_dispatcher, absl::ToDoubleSeconds(r.client_cpu), r.client_cpu_us_per_request()));
  std::vector<std::string> errors;
  for (const auto& [code, count] : r.errors_by_code) {
    errors.push_back(absl::StrFormat("%s: {\"count\": %d, \"first_message\": %s}", JsonString(code),
                                     count, JsonString(r.first_error_message.at(code))));
  }
  f.push_back(absl::StrCat("\"errors_by_code\": {", absl::StrJoin(errors, ", "), "}"));
  std::vector<std::string> served;
  for (const auto& [where, count] : r.served_by) {
    served.push_back(absl::StrFormat("%s: %d", JsonString(where), count));
  }
  f.push_back(absl::StrCat("\"served_by\": {", absl::StrJoin(served, ", "), "}"));
  f.push_back(absl::StrCat("\"passed\": ", r.passed() ? "true" : "false"));
  return absl::StrCat("{", absl::StrJoin(f, ", "), "}\n");
}

std::string CsvHeader() {
  return "load,rpc,key_type,value_width,sizes,mean_keys,loop,rate,concurrency,channels,dispatchers,"
         "seed,"
         "measured_s,requests_ok,errors,requests_per_s,keys_per_s,mb_per_s,"
         "p50_ms,p90_ms,p99_ms,p999_ms,max_ms,"
         "uncorrected_p50_ms,uncorrected_p90_ms,uncorrected_p99_ms,uncorrected_p999_ms,"
         "uncorrected_max_ms,errors_by_code,busiest_dispatcher,client_cpu_us_per_request,"
         "transport\n";
}

std::string FormatCsvRow(const BenchResult& r) {
  const BenchOptions& o = r.options;
  std::vector<std::string> errors;
  for (const auto& [code, count] : r.errors_by_code)
    errors.push_back(absl::StrCat(code, "=", count));
  std::string row = absl::StrFormat(
      "%s,%s,%s,%d,%s,%.0f,%s,%g,%d,%d,%d,%d,%.4f,%d,%d,%.2f,%.1f,%.3f", CsvField(DescribeLoad(o)),
      o.echo ? "echo" : "sort", KeyTypeName(o.key_type), o.value_width, SizeSpecName(o.sizes),
      r.mean_request_keys, o.rate > 0 ? "open" : "closed", o.rate, o.concurrency, o.channels,
      EffectiveDispatchers(o), o.seed, absl::ToDoubleSeconds(r.measured), r.ok, r.errors(),
      r.requests_per_second(), r.keys_per_second(), r.megabytes_per_second());
  for (const LatencyHistogram* h : {&r.corrected, &r.uncorrected}) {
    for (const Quantile& q : kQuantiles)
      absl::StrAppendFormat(&row, ",%.4f", Ms(h->Percentile(q.q)));
    absl::StrAppendFormat(&row, ",%.4f", Ms(h->max()));
  }
  absl::StrAppend(&row, ",", CsvField(absl::StrJoin(errors, ";")));
  absl::StrAppendFormat(&row, ",%.3f,%.2f,%s\n", r.busiest_dispatcher,
                        r.client_cpu_us_per_request(), TransportName(o));
  return row;
}

std::string FormatProgressLine(const Progress& p) {
  return absl::StrFormat("%s %6.1f s  %10d requests  %9.1f/s  %d errors",
                         p.warming_up ? "warm-up" : "running", absl::ToDoubleSeconds(p.elapsed),
                         p.completed, p.current_rate, p.errors);
}

}  // namespace sortd::bench
