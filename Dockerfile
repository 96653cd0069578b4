# cadre-controller image: built on Debian bookworm, shipped on bookworm-slim
# with only the shared libraries the binary links (libcurl, jansson, libyaml,
# OpenSSL, libwebsockets) and no shell tools beyond the base.
#   docker build -t cadre/controller:0.1.0 .
FROM debian:bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
        cmake make gcc pkg-config libc6-dev \
        libcurl4-openssl-dev libjansson-dev libyaml-dev libssl-dev libwebsockets-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY base base
COPY api api
COPY kube kube
COPY controller controller
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DCADRE_TESTS=OFF \
    && cmake --build /build -j"$(nproc)" --target cadre-controller \
    && strip /build/cadre-controller

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
        ca-certificates libcurl4 libjansson4 libyaml-0-2 libssl3 libwebsockets17 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/cadre-controller /usr/local/bin/cadre-controller
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/cadre-controller"]
