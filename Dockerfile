# cadre-controller image: built on Debian bookworm, shipped on bookworm-slim
# with only the shared libraries the binaries link (libcurl, jansson, libyaml,
# OpenSSL, libwebsockets; libarchive and libgit2 for the CLI's code bundles) and
# no shell tools beyond the base. The `cadre`
# command line (and kubectl-cadre) comes with it, for `kubectl cp` or an
# init container that puts it where users find it.
#   docker build -t cadre/controller:0.1.0 .
FROM debian:bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
        cmake make gcc pkg-config libc6-dev \
        libcurl4-openssl-dev libjansson-dev libyaml-dev libssl-dev libwebsockets-dev \
        libarchive-dev libgit2-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY base base
COPY api api
COPY kube kube
COPY controller controller
COPY convert convert
COPY cli cli
COPY bench bench
# The dashboard's page, which the CLI embeds (cmake/embed.cmake).
COPY cmake cmake
COPY web/dashboard web/dashboard
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DCADRE_TESTS=OFF \
    && cmake --build /build -j"$(nproc)" --target cadre-controller cadre \
    && strip /build/cadre-controller /build/cadre

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
        ca-certificates libcurl4 libjansson4 libyaml-0-2 libssl3 libwebsockets17 \
        libarchive13 libgit2-1.5 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/cadre-controller /build/cadre /usr/local/bin/
RUN ln -s cadre /usr/local/bin/kubectl-cadre
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/cadre-controller"]
