# shellcheck shell=bash
# Sourced by collect-runtime.sh and device-bundle.sh: the shared libraries executables load beyond
# the base runtime every Linux image has (glibc, the C++ runtime) and the CUDA driver the NVIDIA
# runtime injects. A copy of those would clash with the newer ones where the files go.
runtime_base='linux-vdso|ld-linux|libnss_|libstdc\+\+|libgcc_s|libcuda\.so|libnvidia'
runtime_base+='|/lib(c|m|mvec|pthread|dl|rt|resolv|util|anl|nsl|thread_db|BrokenLocale)\.so'

# runtime_libs FILE...: the path of every library FILE... load outside the base runtime, a line
# each, once; fails naming the libraries that do not resolve. Non-ELF files (scripts) load none.
runtime_libs() {
  local deps
  deps=$(ldd "$@" 2>/dev/null || true)
  if grep -q 'not found' <<<"$deps"; then
    echo "unresolved: $(grep 'not found' <<<"$deps" | xargs)" >&2
    return 1
  fi
  awk '$3 ~ /^\// {print $3}' <<<"$deps" | grep -Ev "$runtime_base" | sort -u || true
}
