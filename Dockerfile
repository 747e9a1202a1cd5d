# sortd for the NVIDIA container runtime. Multi-stage: build on the CUDA devel image, run on the
# matching CUDA runtime image with only the shared libraries sortd and sortctl load.
#   docker build -t sortd .
#   docker run --gpus all -p 50051:50051 -p 9464:9464 sortd      # GPU engine when present
#   docker run -p 50051:50051 sortd                               # CPU engine, no GPU needed
# Any Debian/Ubuntu base works through build arguments; a CPU-only image needs no CUDA at all
# (CI builds this one with podman on a locally made Debian 12 base, tests/deploy/container_test.sh):
#   podman build --format docker --build-arg BUILD_BASE=docker.io/library/debian:12 \
#     --build-arg RUNTIME_BASE=docker.io/library/debian:12 \
#     --build-arg SORTD_CUDA=OFF -t sortd:cpu .
# (--format docker: the OCI format has no HEALTHCHECK.)
ARG CUDA_VERSION=13.0.1
ARG UBUNTU=ubuntu24.04
# Fully qualified, so podman (which has no default registry) resolves them as docker does.
ARG BUILD_BASE=docker.io/nvidia/cuda:${CUDA_VERSION}-devel-${UBUNTU}
ARG RUNTIME_BASE=docker.io/nvidia/cuda:${CUDA_VERSION}-runtime-${UBUNTU}

FROM ${BUILD_BASE} AS build
# ON: the CUDA engine must build (the default, on the CUDA devel base); OFF: CPU engine only;
# AUTO: whichever the base allows.
ARG SORTD_CUDA=ON
# The GPUs' compute capabilities the kernels are built for (CMake's CUDA_ARCHITECTURES list, e.g.
# "80;90" for A100 and H100/H200). sortd tests each GPU at start-up and refuses one these do not
# run on, naming its capability.
ARG CUDA_ARCHITECTURES=90
WORKDIR /src
# Dependencies first, through the same script the README and CI use, so this layer is cached
# until the script changes.
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN ./scripts/install-deps.sh --build-only && rm -rf /var/lib/apt/lists/*
# Only what sortd and sortctl build from (tests, benches and docs are off), so a change to
# those alone keeps the compile layer cached.
COPY CMakeLists.txt ./
COPY proto proto
COPY kernels kernels
COPY worker worker
COPY rpc rpc
COPY server server
COPY client client
COPY scripts/collect-runtime.sh scripts/runtime_libs.sh scripts/
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSORTD_CUDA="${SORTD_CUDA}" \
      -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES}" \
      -DSORTD_BUILD_TESTS=OFF -DSORTD_BUILD_BENCH=OFF \
 && cmake --build build --parallel "$(nproc)" --target sortd sortctl \
 && ./scripts/collect-runtime.sh /out build/server/sortd build/client/sortctl

FROM ${RUNTIME_BASE} AS runtime
# Appended to, not replaced: the CUDA base's path names where the NVIDIA runtime mounts the
# driver's libcuda on some clusters.
ENV PATH=/opt/sortd/bin:$PATH \
    LD_LIBRARY_PATH=/opt/sortd/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# malloc's large buffers (messages, sort scratch) in transparent huge pages: each is mapped afresh
# per request, and without this faulting it in 4 KiB at a time is most of a 16M-key CPU sort
# (docs/performance.md, "Huge pages for malloc"). It matters where the host's THP mode is madvise.
ENV GLIBC_TUNABLES=glibc.malloc.hugetlb=1
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin sortd
USER sortd
# 50051: gRPC (sortd.v1.SortService, health, reflection); 9464: Prometheus /metrics.
EXPOSE 50051 9464
# With TLS (sortd --tls_cert_file ...) the health check needs sortctl's TLS flags: set them as
# environment variables, which --tryfromenv reads when present: FLAGS_tls_ca_file (the CA of
# sortd's certificate), FLAGS_tls_server_name (a name in that certificate, unless it has
# IP:127.0.0.1), and for mTLS FLAGS_tls_cert_file/FLAGS_tls_key_file (a client certificate).
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["sortctl", "health", "--target=127.0.0.1:50051", "--timeout=3s", \
       "--tryfromenv=tls_ca_file,tls_cert_file,tls_key_file,tls_server_name"]
ENTRYPOINT ["sortd"]
CMD ["--listen=0.0.0.0:50051", "--metrics_listen=0.0.0.0:9464", "--drain_deadline=30s"]

# sortd and sortctl built outside the image, on a machine of the runtime base's distribution, and
# collected with their libraries by scripts/collect-runtime.sh into .container-prebuilt/ in the
# build context (CI's container check takes the build its tests ran on rather than compiling
# again): --target prebuilt. BuildKit and buildah build only the stages the target needs.
FROM runtime AS prebuilt
COPY .container-prebuilt /opt/sortd

# The default image: sortd and sortctl compiled in the build stage above.
FROM runtime
COPY --from=build /out /opt/sortd
