# syntax=docker/dockerfile:1
# khaelor-perm service image: built in the Rust image, run as non-root on distroless.
#
#   docker build -t khaelor-perm .
#   docker run -p 8790:8790 -v khaelor-state:/var/lib/khaelor-perm \
#     -v "$PWD/token:/run/secrets/khaelor-perm-token:ro" khaelor-perm
#
# The container listens on 0.0.0.0, so the server insists on a token: mount one at
# /run/secrets/khaelor-perm-token (or run `serve --token-file FILE`). Without
# it the server refuses to start and says why. Projects it judges must be visible in
# the container at the paths the agent host sends (mount them read-only at the same
# path, and add --workspace-root to confine it to them).

FROM rust:1.95-slim-bookworm AS build
# The commit `khaelor-perm --version` names; the build context has no .git, so pass it:
#   docker build --build-arg KHAELOR_PERM_COMMIT="$(git log -1 --format='%h %cs')" .
# Without it the version says "unknown commit".
ARG KHAELOR_PERM_COMMIT=""
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin khaelor-perm \
    && install -D -m 0755 target/release/khaelor-perm /out/khaelor-perm \
    && install -d -m 0700 -o 65532 -g 65532 /out/state

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/khaelor-perm /usr/local/bin/khaelor-perm
COPY --from=build --chown=65532:65532 /out/state /var/lib/khaelor-perm
ENV KHAELOR_PERM_ADDR=0.0.0.0:8790 \
    KHAELOR_PERM_STATE_DIR=/var/lib/khaelor-perm \
    KHAELOR_PERM_LOG_FORMAT=json
USER 65532:65532
VOLUME ["/var/lib/khaelor-perm"]
EXPOSE 8790
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 \
    CMD ["/usr/local/bin/khaelor-perm", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/khaelor-perm"]
CMD ["serve", "--token-file", "/run/secrets/khaelor-perm-token"]
