#!/usr/bin/env bash
# kube.sh: a private single-node Kubernetes cluster for cordon's tests,
# built without any container registry.
#
#   scripts/kube.sh build   build Kubernetes (one binary: apiserver,
#                           controller-manager, scheduler, kubelet) from the
#                           Go module proxy; cached by version
#   scripts/kube.sh image   the pause and test images (busybox and
#                           cordon-pod built from this tree), imported with ctr
#   scripts/kube.sh up      build, start etcd, containerd, the control plane
#                           and the kubelet, wait for the node, import the
#                           images, write the env file
#   scripts/kube.sh down    stop everything, unmount, remove the state
#   scripts/kube.sh status  exit 0 when the API server answers
#   scripts/kube.sh env     print the env file
#
# Kubernetes v1.34 (KUBE_VERSION): v1.35 fails on cgroup v1 by default and
# v1.36 drops containerd 1.x, which is what apt has. The k8s.io/kubernetes
# module has no staging/ directory, so a wrapper module
# (scripts/kube/go.mod, its main in scripts/kube/cmd/kube) requires it and replaces every staging module with
# its v0.x release. From apt: etcd-server, containerd, runc,
# containernetworking-plugins, kubectl, openssl (scripts/provision.sh).
#
# Everything is private to this checkout and on loopback: state under
# $BUILD_DIR/kube (certificates, etcd data, containerd root and state, the
# kubelet's root dir, logs), containerd's socket there, the API server on
# 127.0.0.1:$KUBE_API_PORT, etcd, the kubelet, controller-manager and
# scheduler on fixed loopback ports beside it. The pods get a bridge in
# 10.244.77.0/24 with no route out and no masquerade. No CoreDNS and no
# kube-proxy (their images cannot be had; the tests need neither).
#
# Env file ($BUILD_DIR/kube/env), read by scripts/with-env.sh:
#   KUBECONFIG=…/admin.kubeconfig
#   CORDON_KUBE_IMAGE=cordon.local/kube-test:<sha12>
#   CORDON_KUBE_NAMESPACE=default
#
# Exit status of build/image/up: 0 ready, 2 skipped (not Linux, not root,
# CORDON_KUBE=off, a tool missing) with the reason printed, 1 an error. A
# skip is an error when CORDON_REQUIRE names kubernetes.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

KUBE_VERSION="${KUBE_VERSION:-v1.34.4}"
KUBE_API_PORT="${KUBE_API_PORT:-16443}"
ETCD_PORT="${ETCD_PORT:-12379}"
ETCD_PEER_PORT="${ETCD_PEER_PORT:-12380}"
KUBELET_PORT="${KUBELET_PORT:-10250}"
KUBELET_HEALTH_PORT="${KUBELET_HEALTH_PORT:-10248}"
KCM_PORT="${KCM_PORT:-10257}"
SCHED_PORT="${SCHED_PORT:-10259}"
# The node is named localhost, which resolves to 127.0.0.1 everywhere:
# the API server reaches the kubelet by that Hostname address (the
# kubelet refuses a loopback --node-ip), so exec traffic stays on
# loopback.
NODE="localhost"
POD_CIDR="10.244.77.0/24"
BRIDGE="cordon-kube0"

K="$BUILD_DIR/kube"
STATE="$K/state" # everything "down" removes
PKI="$STATE/pki"
LOGS="$STATE/logs"
BIN="$K/bin/kube-$KUBE_VERSION"
SOCK="$STATE/containerd/containerd.sock"
ENVFILE="$K/env"
SRC="$CORDON_ROOT/scripts/kube"

# skip ends with status 2 (or 1 when kubernetes is required).
skip() {
	if required kubernetes; then
		die "kube: $* (CORDON_REQUIRE names kubernetes)"
	fi
	log "kube: skipped: $*"
	exit 2
}

precheck() {
	[ "${CORDON_KUBE:-auto}" != off ] || skip "CORDON_KUBE=off"
	is_linux || skip "a private cluster needs Linux (this is $(uname -s))"
	is_root || skip "a private cluster needs root (uid $(id -u))"
	local t
	for t in etcd containerd runc ctr kubectl openssl ip; do
		have "$t" || skip "$t is not installed (scripts/provision.sh installs it as root with apt)"
	done
	[ -x /usr/lib/cni/bridge ] || skip "the CNI plugins are not installed (containernetworking-plugins)"
}

cmd_build() {
	precheck
	if [ -x "$BIN" ]; then
		return 0
	fi
	local start ld
	start="$(now)"
	mkdir -p "$(dirname "$BIN")"
	ld="-s -w"
	ld="$ld -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION"
	ld="$ld -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34"
	ld="$ld -X k8s.io/component-base/version.gitTreeState=clean"
	ld="$ld -X k8s.io/component-base/version.buildDate=2026-01-01T00:00:00Z"
	ld="$ld -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"
	ld="$ld -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=34"
	log "kube: building Kubernetes $KUBE_VERSION (about 8 minutes cold on 2 cores, seconds with the Go build cache)"
	(cd "$SRC" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$ld" -o "$BIN.tmp" ./cmd/kube)
	mv "$BIN.tmp" "$BIN"
	log "kube: built $BIN in $(since "$start")"
}

# ---- certificates -------------------------------------------------------

# cert NAME CN O [SAN]: a key and a certificate signed by the CA.
cert() {
	local name="$1" cn="$2" o="$3" san="${4:-}" ext="$PKI/$1.ext"
	openssl genrsa -out "$PKI/$name.key" 2048 2>/dev/null
	local subj="/CN=$cn"
	[ -z "$o" ] || subj="/O=$o$subj"
	openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		[ -z "$san" ] || echo "subjectAltName=$san"
	} >"$ext"
	openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 30 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
}

# kubeconfig NAME CERT: a kubeconfig for the API server with a client cert.
kubeconfig() {
	cat >"$STATE/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: cordon
  cluster:
    certificate-authority: $PKI/ca.crt
    server: https://127.0.0.1:$KUBE_API_PORT
users:
- name: $1
  user:
    client-certificate: $PKI/$2.crt
    client-key: $PKI/$2.key
contexts:
- name: cordon
  context: {cluster: cordon, user: $1, namespace: default}
current-context: cordon
EOF
}

make_pki() {
	mkdir -p "$PKI"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" \
		-days 30 -subj "/CN=cordon-test-ca" 2>/dev/null
	cert apiserver kube-apiserver "" "IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
	cert admin admin system:masters
	cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
	cert controller-manager system:kube-controller-manager ""
	cert scheduler system:kube-scheduler ""
	cert kubelet "system:node:$NODE" system:nodes "IP:127.0.0.1,DNS:$NODE"
	openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
	openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
	kubeconfig admin admin
	kubeconfig controller-manager controller-manager
	kubeconfig scheduler scheduler
	kubeconfig kubelet kubelet
}

# ---- processes ----------------------------------------------------------

# start NAME CMD...: run in the background, log and pid under $STATE.
start() {
	local name="$1"
	shift
	setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
	echo $! >"$STATE/$name.pid"
}

# wait_for WHAT SECONDS CMD...: poll CMD until it succeeds.
wait_for() {
	local what="$1" secs="$2"
	shift 2
	for _ in $(seq 1 $((secs * 10))); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.1
	done
	warn "kube: $what not ready within ${secs}s; the last log lines:"
	tail -n 20 "$LOGS"/*.log >&2 || true
	return 1
}

kctl() { kubectl --kubeconfig "$STATE/admin.kubeconfig" "$@"; }

write_containerd_config() {
	mkdir -p "$STATE/containerd" "$STATE/cni/net.d"
	cat >"$STATE/containerd/config.toml" <<EOF
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$STATE/containerd/ttrpc.sock"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "cordon.local/pause:1"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
EOF
	cat >"$STATE/cni/net.d/10-cordon.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "cordon-test",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": false,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "dataDir": "$STATE/cni/ipam"}
    },
    {"type": "loopback"}
  ]
}
EOF
}

write_kubelet_config() {
	mkdir -p "$STATE/kubelet"
	cat >"$STATE/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTH_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: AlwaysAllow}
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
cgroupDriver: cgroupfs
cgroupRoot: /cordon-kube
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$SOCK
imageServiceEndpoint: unix://$SOCK
resolvConf: ""
serializeImagePulls: false
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
enforceNodeAllocatable: []
podCIDR: $POD_CIDR
maxPods: 110
registerNode: true
syncFrequency: 5s
fileCheckFrequency: 5s
nodeStatusUpdateFrequency: 2s
EOF
}

cmd_up() {
	precheck
	if cmd_status >/dev/null 2>&1; then
		log "kube: already running; importing the test image again"
		cmd_image
		write_env
		return 0
	fi
	cmd_build
	"$0" down >/dev/null 2>&1 || true
	local t0
	t0="$(now)"
	mkdir -p "$STATE" "$LOGS"
	make_pki
	write_containerd_config
	write_kubelet_config

	start etcd etcd --name cordon --data-dir "$STATE/etcd" \
		--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster "cordon=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls ""
	start containerd containerd --config "$STATE/containerd/config.toml"
	start apiserver "$BIN" apiserver \
		--etcd-servers "http://127.0.0.1:$ETCD_PORT" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$KUBE_API_PORT" \
		--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
		--client-ca-file "$PKI/ca.crt" \
		--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
		--service-account-issuer https://kubernetes.default.svc \
		--kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
		--kubelet-preferred-address-types Hostname \
		--authorization-mode Node,RBAC \
		--service-cluster-ip-range 10.96.0.0/24 \
		--enable-admission-plugins NodeRestriction \
		--profiling=false
	wait_for "the API server" 60 kctl get --raw /readyz || return 1
	local t1
	t1="$(now)"
	start controller-manager "$BIN" controller-manager \
		--kubeconfig "$STATE/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$STATE/controller-manager.kubeconfig" \
		--authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false \
		--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
		--use-service-account-credentials \
		--controllers '*,-nodeipam,-service-lb-controller,-cloud-node-lifecycle,-route' \
		--profiling=false
	start scheduler "$BIN" scheduler \
		--kubeconfig "$STATE/scheduler.kubeconfig" \
		--authentication-kubeconfig "$STATE/scheduler.kubeconfig" \
		--authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --leader-elect=false --profiling=false
	wait_for "containerd" 30 ctr --address "$SOCK" version || return 1
	cmd_image
	# The kubelet's cgroup root, in every hierarchy (cgroup v1 controllers
	# and the unified one): /cordon-kube, apart from other engines'.
	local h
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -e "$h/cgroup.procs" ] && mkdir -p "$h/cordon-kube"
	done
	start kubelet "$BIN" kubelet \
		--config "$STATE/kubelet/config.yaml" \
		--kubeconfig "$STATE/kubelet.kubeconfig" \
		--root-dir "$STATE/kubelet/root" \
		--hostname-override "$NODE"
	wait_for "the node" 90 node_ready || return 1
	wait_for "the default service account" 60 kctl get serviceaccount default || return 1
	write_env
	log "kube: cluster up in $(since "$t0") (API server ready after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1fs", b - a }'))"
}

node_ready() {
	[ "$(kctl get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

# ---- images -------------------------------------------------------------

# oci_image DIR REF ENTRYPOINT packs DIR/rootfs as a one-layer OCI image
# archive DIR/image.tar named REF; prints the layer's digest.
oci_image() {
	local dir="$1" ref="$2" entry="$3" layer ldig lsize cfg cdig csize man mdig msize
	local blobs="$dir/oci/blobs/sha256"
	rm -rf "$dir/oci"
	mkdir -p "$blobs"
	layer="$dir/layer.tar"
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$dir/rootfs" -cf "$layer" .
	ldig="$(sha256sum "$layer" | cut -d' ' -f1)"
	lsize="$(stat -c %s "$layer")"
	mv "$layer" "$blobs/$ldig"
	cfg="$dir/config.json"
	printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["%s"],"Env":["PATH=/usr/local/bin:/usr/bin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$(go env GOARCH)" "$entry" "$ldig" >"$cfg"
	cdig="$(sha256sum "$cfg" | cut -d' ' -f1)"
	csize="$(stat -c %s "$cfg")"
	mv "$cfg" "$blobs/$cdig"
	man="$dir/manifest.json"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
		"$cdig" "$csize" "$ldig" "$lsize" >"$man"
	mdig="$(sha256sum "$man" | cut -d' ' -f1)"
	msize="$(stat -c %s "$man")"
	mv "$man" "$blobs/$mdig"
	printf '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci/oci-layout"
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		"$mdig" "$msize" "$ref" "${ref##*:}" >"$dir/oci/index.json"
	tar -C "$dir/oci" -cf "$dir/image.tar" .
	printf '%s\n' "$ldig"
}

cmd_image() {
	precheck
	local bb dir sum ref
	bb="$(static_busybox)" || skip "no static busybox (busybox-static)"
	# The pause image: a static program that sleeps until signalled.
	dir="$K/images/pause"
	rm -rf "$dir/rootfs"
	mkdir -p "$dir/rootfs"
	(cd "$SRC" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$dir/rootfs/pause" ./pause)
	oci_image "$dir" cordon.local/pause:1 /pause >/dev/null
	ctr --address "$SOCK" -n k8s.io images import --no-unpack=false "$dir/image.tar" >/dev/null
	# The test image: busybox (as the docker backend's test image) and
	# cordon-pod.
	dir="$K/images/test"
	busybox_rootfs "$dir/rootfs" "$bb"
	mkdir -p "$dir/rootfs/usr/local/bin"
	(cd "$CORDON_ROOT" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$dir/rootfs/usr/local/bin/cordon-pod" ./cmd/cordon-pod)
	sum="$(oci_image "$dir" cordon.local/kube-test:pending /usr/local/bin/cordon-pod | cut -c1-12)"
	ref="cordon.local/kube-test:$sum"
	oci_image "$dir" "$ref" /usr/local/bin/cordon-pod >/dev/null
	ctr --address "$SOCK" -n k8s.io images import "$dir/image.tar" >/dev/null
	printf '%s\n' "$ref" >"$K/test-image"
	[ ! -f "$STATE/admin.kubeconfig" ] || write_env
	log "kube: imported $ref and cordon.local/pause:1"
}

write_env() {
	{
		printf 'KUBECONFIG=%s\n' "$STATE/admin.kubeconfig"
		printf 'CORDON_KUBE_IMAGE=%s\n' "$(cat "$K/test-image")"
		printf 'CORDON_KUBE_NAMESPACE=default\n'
	} >"$ENVFILE"
}

cmd_status() {
	[ -f "$STATE/admin.kubeconfig" ] && kctl get --raw /readyz >/dev/null 2>&1
}

# ---- teardown -----------------------------------------------------------

stop_pid() {
	local f="$STATE/$1.pid" pid
	[ -f "$f" ] || return 0
	pid="$(cat "$f")"
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
	rm -f "$f"
}

cmd_down() {
	[ -d "$STATE" ] || {
		rm -f "$ENVFILE"
		return 0
	}
	local t0 p m
	t0="$(now)"
	# Pods first (grace 0), while the kubelet still runs, then the rest.
	if cmd_status; then
		kctl delete pods --all --all-namespaces --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
	fi
	stop_pid kubelet
	stop_pid scheduler
	stop_pid controller-manager
	stop_pid apiserver
	# The containers' shims: this containerd's only (their -address).
	for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCK" || true); do
		kill -KILL "$p" 2>/dev/null || true
	done
	for p in $(pgrep -f "$STATE/containerd" || true); do
		kill -KILL "$p" 2>/dev/null || true
	done
	stop_pid containerd
	stop_pid etcd
	# Mounts under the state directory and the pods' network namespaces,
	# deepest first.
	awk -v s="$STATE" 'index($2, s) == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done
	# The pods' network namespaces that this cluster's CNI made: only
	# those no process uses any more.
	awk '$2 ~ "^/run/netns/cni-" { print $2 }' /proc/self/mounts | while read -r m; do
		if ! ip netns pids "$(basename "$m")" 2>/dev/null | grep -q .; then
			umount -l "$m" 2>/dev/null || true
			rm -f "$m"
		fi
	done
	ip link delete "$BRIDGE" 2>/dev/null || true
	# The kubelet's cgroups.
	for m in /sys/fs/cgroup/*/cordon-kube /sys/fs/cgroup/unified/cordon-kube; do
		if [ -d "$m" ]; then
			find "$m" -depth -type d -exec rmdir {} \; 2>/dev/null || true
		fi
	done
	rm -rf "$STATE" "$ENVFILE"
	log "kube: cluster down in $(since "$t0")"
}

case "${1:-}" in
build) cmd_build ;;
image) cmd_image ;;
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
env) cat "$ENVFILE" ;;
*) die "usage: scripts/kube.sh build|image|up|down|status|env" ;;
esac
