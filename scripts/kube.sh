#!/usr/bin/env bash
# kube.sh: a private single-node Kubernetes cluster for cordon's tests,
# built without any container registry.
#
#   scripts/kube.sh build   build Kubernetes (one binary: apiserver,
#                           controller-manager, scheduler, kubelet, kubectl)
#                           from the Go module proxy; cached by version and
#                           wrapper digest
#   scripts/kube.sh image   the pause and test images (busybox and
#                           cordon-pod built from this tree), imported with
#                           ctr into the running cluster; run it again after
#                           changing cmd/cordon-pod (the tag follows the content)
#   scripts/kube.sh up      build, start etcd, containerd, the control plane
#                           and the kubelet, wait for the node, import the
#                           images, write the env file (a running cluster is
#                           reused: only the images are imported again)
#   scripts/kube.sh down    stop everything, unmount, remove the state
#   scripts/kube.sh status  exit 0 when the API server answers (prints the env file)
#   scripts/kube.sh env     print the env file
#
# Kubernetes v1.34 (as scripts/kube/go.mod requires it): v1.35 fails on cgroup v1 by default and
# v1.36 drops containerd 1.x, which is what apt has. The k8s.io/kubernetes
# module has no staging/ directory, so a wrapper module (scripts/kube/go.mod,
# its main in scripts/kube/cmd/kube) requires it and replaces every staging
# module with its v0.x release; kubectl is in the same binary (Debian's apt
# has no kubectl of a supported skew), linked as $BUILD_DIR/kube/kubectl/
# kubectl. From apt: etcd-server, containerd, runc,
# containernetworking-plugins, busybox-static, iproute2, openssl
# (scripts/provision.sh).
#
# Everything is private to this build dir and on loopback. Layout:
#
#   $BUILD_DIR/kube/bin/kube-$KUBE_VERSION-DIGEST  the binary (kept by "down")
#   $BUILD_DIR/kube/kubectl/kubectl         a link to it (with-env.sh puts it on PATH)
#   $BUILD_DIR/kube/images/                 the image root file systems and archives
#   $BUILD_DIR/kube/env                     the env file (below)
#   $BUILD_DIR/kube/state/                  all "down" removes: pki/ (CA,
#       serving and client certificates, service-account key), *.kubeconfig,
#       etcd/, containerd/ (config, root, state, runc root, socket), kubelet/
#       (config, --root-dir), cni/ (net.d, IPAM), logs/, *.pid
#
# Names per build dir (HASH from $BUILD_DIR, as docker.sh): the kubelet's
# cgroup root /cordon-kube-HASH (in every hierarchy; docker's stays apart),
# the pods' bridge ckube-HASH (10.244.77.0/24, no address on the host, no
# masquerade, so no route out), and the ports, on 127.0.0.1 only, from
# KUBE_PORT_BASE (default 16000 + 20 * (HASH mod 200)): the API server at
# +0, etcd +1 (peer +2), the kubelet +3 (healthz +4), controller-manager +5,
# scheduler +6. The node is named localhost. No CoreDNS and no kube-proxy
# (their images cannot be had; the tests need neither). Pods need
# imagePullPolicy: Never (the images are imported, not pulled).
#
# Knobs: KUBE_PORT_BASE (or KUBE_API_PORT, ETCD_PORT, ...
# one by one), KUBE_START_TIMEOUT (seconds per step, default 90),
# CORDON_KUBE=off (skip).
#
# Env file ($BUILD_DIR/kube/env), read by scripts/with-env.sh:
#   KUBECONFIG=…/admin.kubeconfig
#   CORDON_KUBE_IMAGE=cordon.local/kube-test:<sha12>
#   CORDON_KUBE_NAMESPACE=default
#
# Exit status of build/image/up: 0 ready, 2 skipped (not Linux, not root,
# CORDON_KUBE=off, a tool missing) with the reason printed, 1 an error. A
# skip is an error when CORDON_REQUIRE names kubernetes. "up" that fails
# tears down what it started.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# The version is the one scripts/kube/go.mod requires.
KUBE_VERSION="$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$CORDON_ROOT/scripts/kube/go.mod")"
[ -n "$KUBE_VERSION" ] || die "kube: scripts/kube/go.mod requires no k8s.io/kubernetes"
HASH="$(short_hash "$BUILD_DIR")"
KUBE_PORT_BASE="${KUBE_PORT_BASE:-$((16000 + 20 * ($((16#$HASH)) % 200)))}"
KUBE_API_PORT="${KUBE_API_PORT:-$KUBE_PORT_BASE}"
ETCD_PORT="${ETCD_PORT:-$((KUBE_PORT_BASE + 1))}"
ETCD_PEER_PORT="${ETCD_PEER_PORT:-$((KUBE_PORT_BASE + 2))}"
KUBELET_PORT="${KUBELET_PORT:-$((KUBE_PORT_BASE + 3))}"
KUBELET_HEALTH_PORT="${KUBELET_HEALTH_PORT:-$((KUBE_PORT_BASE + 4))}"
KCM_PORT="${KCM_PORT:-$((KUBE_PORT_BASE + 5))}"
SCHED_PORT="${SCHED_PORT:-$((KUBE_PORT_BASE + 6))}"
START_TIMEOUT="${KUBE_START_TIMEOUT:-90}"
# The node is named localhost, which resolves to 127.0.0.1 everywhere:
# the API server reaches the kubelet by that Hostname address (the
# kubelet refuses a loopback --node-ip), so exec traffic stays on
# loopback.
NODE="localhost"
POD_CIDR="10.244.77.0/24"
BRIDGE="ckube-$HASH"
CGROUP_ROOT="/cordon-kube-$HASH"
PAUSE_IMAGE="cordon.local/pause:1"

K="$BUILD_DIR/kube"
STATE="$K/state" # everything "down" removes
PKI="$STATE/pki"
LOGS="$STATE/logs"
# The binary is named by the version and a digest of the wrapper module
# (go.mod, go.sum, main), so a change there builds it again.
SRC="$CORDON_ROOT/scripts/kube"
BIN="$K/bin/kube-$KUBE_VERSION-$(cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/cmd/kube/main.go" | sha256sum | cut -c1-8)"
# kubectl is the binary too (a link named kubectl), version-matched:
# Debian's apt has no kubectl of a supported skew.
KUBECTL="$K/kubectl/kubectl"
ENVFILE="$K/env"
# containerd's sockets: under the state dir unless the path would not fit
# in a unix socket address (107 bytes).
SOCKDIR="$STATE/containerd"
if [ "${#SOCKDIR}" -gt 80 ]; then
	SOCKDIR="/run/cordon-kube-$HASH"
fi
SOCK="$SOCKDIR/containerd.sock"

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
	for t in etcd containerd containerd-shim-runc-v2 runc ctr openssl ip ss; do
		have "$t" || skip "$t is not installed (scripts/provision.sh installs it as root with apt)"
	done
	for t in bridge host-local loopback; do
		[ -x "/usr/lib/cni/$t" ] || skip "the CNI plugin $t is not installed (containernetworking-plugins)"
	done
	static_busybox >/dev/null || skip "no statically linked busybox (busybox-static)"
	have "$GO" || skip "Go ($GO) is not installed: Kubernetes is built from source"
}

cmd_build() {
	precheck
	if [ ! -x "$BIN" ]; then
		local start ld minor old
		start="$(now)"
		minor="${KUBE_VERSION#v1.}"
		minor="${minor%%.*}"
		mkdir -p "$(dirname "$BIN")"
		ld="-s -w"
		ld="$ld -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION"
		ld="$ld -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
		ld="$ld -X k8s.io/component-base/version.gitTreeState=clean"
		ld="$ld -X k8s.io/component-base/version.buildDate=2026-01-01T00:00:00Z"
		ld="$ld -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"
		ld="$ld -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
		log "kube: building Kubernetes $KUBE_VERSION (about 8 minutes cold on 2 cores, seconds with the Go build cache)"
		(cd "$SRC" && CGO_ENABLED=0 GOFLAGS=-mod=mod GOWORK=off "$GO" build -trimpath -ldflags "$ld" -o "$BIN.tmp" ./cmd/kube)
		mv "$BIN.tmp" "$BIN"
		# Earlier builds (another version or wrapper) are not kept.
		for old in "$K"/bin/kube-*; do
			if [ "$old" != "$BIN" ]; then rm -f "$old"; fi
		done
		log "kube: built $BIN in $(since "$start")"
	fi
	mkdir -p "$(dirname "$KUBECTL")"
	ln -sfn "$BIN" "$KUBECTL"
}

# ---- certificates -------------------------------------------------------

# cert NAME CN O [SAN]: a key and a certificate signed by the CA.
cert() {
	local name="$1" cn="$2" o="$3" san="${4:-}" ext="$PKI/$1.ext" subj
	openssl genrsa -out "$PKI/$name.key" 2048 2>/dev/null
	subj="/CN=$cn"
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

# start NAME CMD...: run in the background in a session of its own, log
# and pid under $STATE.
start() {
	local name="$1"
	shift
	setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
	echo $! >"$STATE/$name.pid"
}

# wait_for WHAT CMD...: poll CMD until it succeeds, for START_TIMEOUT
# seconds; fails showing the last log lines.
wait_for() {
	local what="$1" deadline
	shift
	deadline=$(($(date +%s) + START_TIMEOUT))
	while ! "$@" >/dev/null 2>&1; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			warn "kube: $what not ready within ${START_TIMEOUT}s; the last log lines:"
			tail -n 15 "$LOGS"/*.log 2>/dev/null | sed 's/^/    /' >&2 || true
			return 1
		fi
		sleep 0.2
	done
}

# kctl runs our kubectl (or, before the first build, the one on PATH).
kctl() {
	local k="$KUBECTL"
	[ -x "$k" ] || k=kubectl
	"$k" --kubeconfig "$STATE/admin.kubeconfig" --request-timeout 10s "$@"
}
cctl() { ctr --address "$SOCK" --timeout 10s -n k8s.io "$@"; }

write_containerd_config() {
	mkdir -p "$STATE/containerd" "$SOCKDIR" "$STATE/cni/net.d"
	cat >"$STATE/containerd/config.toml" <<EOF
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCKDIR/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # No CAP_SYS_RESOURCE here: runc cannot lower the sandbox's oom_score_adj.
  restrict_oom_score_adj = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
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
        Root = "$STATE/containerd/runc"
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
cgroupRoot: $CGROUP_ROOT
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

# ports_free fails naming the first of our ports something listens on.
ports_free() {
	local p
	for p in "$KUBE_API_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT" "$KUBELET_PORT" "$KUBELET_HEALTH_PORT" "$KCM_PORT" "$SCHED_PORT"; do
		if [ -n "$(ss -ltnH "sport = :$p" 2>/dev/null)" ]; then
			die "kube: port $p (127.0.0.1) is in use; set KUBE_PORT_BASE to a free range of 7 ports (now $KUBE_PORT_BASE)"
		fi
	done
}

# node_ready: the node is Ready and without taints. The kubelet registers
# it with node.kubernetes.io/not-ready:NoSchedule, which the
# controller-manager lifts seconds after the node is Ready; lifted here
# as soon as it is.
node_ready() {
	local s
	s="$(kctl get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.spec.taints[*].key}' 2>/dev/null)" || return 1
	case "$s" in
	True/) return 0 ;;
	True/node.kubernetes.io/not-ready) kctl taint node "$NODE" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 ;;
	esac
	return 1
}

# up_failed tears down what "up" started and fails.
up_failed() {
	warn "kube: $*; logs in $LOGS (copied to $K/last-failed-logs)"
	rm -rf "$K/last-failed-logs"
	cp -r "$LOGS" "$K/last-failed-logs" 2>/dev/null || true
	(cmd_down) || true
	die "kube: the cluster did not come up: $*"
}

cmd_up() {
	precheck
	if cmd_status >/dev/null 2>&1; then
		log "kube: reusing the running cluster ($(sed -n 's/^ *server: //p' "$STATE/admin.kubeconfig")); importing the images again"
		cmd_image
		return 0
	fi
	cmd_build
	(cmd_down) >/dev/null 2>&1 || true # a stale state dir, mount or process of a killed run
	ports_free
	local t0 t1 h
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
		--kubelet-certificate-authority "$PKI/ca.crt" \
		--kubelet-preferred-address-types Hostname \
		--authorization-mode Node,RBAC \
		--service-cluster-ip-range 10.96.0.0/24 \
		--enable-admission-plugins NodeRestriction \
		--profiling=false
	# The images while the API server starts, then the kubelet (it
	# registers the node once the API server answers).
	wait_for "containerd" cctl version || up_failed "containerd did not answer on $SOCK"
	(import_images) || up_failed "the images could not be imported"
	# The kubelet's cgroup root, in every hierarchy (cgroup v1 controllers
	# and the unified one), apart from other engines'.
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		if [ -e "$h/cgroup.procs" ]; then mkdir -p "$h/${CGROUP_ROOT#/}"; fi
	done
	start kubelet "$BIN" kubelet \
		--config "$STATE/kubelet/config.yaml" \
		--kubeconfig "$STATE/kubelet.kubeconfig" \
		--root-dir "$STATE/kubelet/root" \
		--hostname-override "$NODE"
	wait_for "the API server" kctl get --raw /readyz || up_failed "the API server did not get ready"
	t1="$(now)"
	# Pods need the default service account; do not wait for the
	# controller-manager to make it.
	kctl create serviceaccount default >/dev/null 2>&1 || true
	# The controller-manager exits when its RBAC roles are not there yet.
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
	wait_for "the node" node_ready || up_failed "the node did not get Ready"
	wait_for "the default service account" kctl get serviceaccount default || up_failed "no default service account"
	for h in etcd containerd apiserver controller-manager scheduler kubelet; do
		kill -0 "$(cat "$STATE/$h.pid")" 2>/dev/null || up_failed "$h exited (log: $LOGS/$h.log)"
	done
	write_env
	log "kube: cluster $KUBE_VERSION up in $(since "$t0") (API server ready after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1fs", b - a }')) on https://127.0.0.1:$KUBE_API_PORT; node $NODE, image $(cat "$K/test-image")"
}

# ---- images -------------------------------------------------------------

# oci_image DIR REF ENTRYPOINT packs DIR/rootfs as a one-layer OCI image
# archive DIR/image.tar (reproducible: sorted, mtime 0, numeric root
# ownership) named REF, or when REF ends in ":" REF and the first 12 hex
# digits of the layer's digest; prints the name.
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
	case "$ref" in *:) ref="$ref$(printf '%s' "$ldig" | cut -c1-12)" ;; esac
	cfg="$dir/config.json"
	printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["%s"],"Env":["PATH=/usr/local/bin:/usr/bin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"${OCI_ARCH:-amd64}" "$entry" "$ldig" >"$cfg"
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
	rm -rf "$dir/oci"
	printf '%s\n' "$ref"
}

# import_images builds the pause image and the test image and imports
# them into the cluster's containerd; records the test image's ref.
import_images() {
	local bb dir ref entry=/bin/sh start
	start="$(now)"
	bb="$(static_busybox)" || skip "no statically linked busybox (busybox-static)"
	OCI_ARCH="$("$GO" env GOARCH)"
	# The pause image: a static program that sleeps until signalled.
	dir="$K/images/pause"
	mkdir -p "$dir/rootfs"
	(cd "$SRC" && CGO_ENABLED=0 GOFLAGS=-mod=mod GOWORK=off "$GO" build -trimpath -ldflags "-s -w" -o "$dir/pause.new" ./pause)
	if [ -f "$dir/image.tar" ] && cmp -s "$dir/pause.new" "$dir/rootfs/pause"; then
		rm -f "$dir/pause.new"
	else
		mv "$dir/pause.new" "$dir/rootfs/pause"
		oci_image "$dir" "$PAUSE_IMAGE" /pause >/dev/null
	fi
	cctl images import "$dir/image.tar" >/dev/null
	# The test image: busybox (as the docker backend's test image; the
	# root file system is made again when the busybox changes) and
	# cordon-pod when this tree has it.
	dir="$K/images/test"
	if ! cmp -s "$bb" "$dir/rootfs/bin/busybox"; then
		busybox_rootfs "$dir/rootfs" "$bb"
	fi
	rm -rf "$dir/rootfs/usr/local"
	if [ -d "$CORDON_ROOT/cmd/cordon-pod" ]; then
		mkdir -p "$dir/rootfs/usr/local/bin"
		(cd "$CORDON_ROOT" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$dir/rootfs/usr/local/bin/cordon-pod" ./cmd/cordon-pod)
		entry=/usr/local/bin/cordon-pod
	fi
	ref="$(oci_image "$dir" cordon.local/kube-test: "$entry")"
	if cctl images ls -q | grep -xF "$ref" >/dev/null; then
		log "kube: test image $ref already imported"
	else
		cctl images import "$dir/image.tar" >/dev/null
		log "kube: imported $ref and $PAUSE_IMAGE in $(since "$start")"
	fi
	printf '%s\n' "$ref" >"$K/test-image"
}

cmd_image() {
	precheck
	cctl version >/dev/null 2>&1 || skip "the cluster is not up (scripts/kube.sh up)"
	import_images
	if [ -f "$STATE/admin.kubeconfig" ]; then write_env; fi
}

write_env() {
	{
		printf 'KUBECONFIG=%s\n' "$STATE/admin.kubeconfig"
		printf 'CORDON_KUBE_IMAGE=%s\n' "$(cat "$K/test-image")"
		printf 'CORDON_KUBE_NAMESPACE=default\n'
	} >"$ENVFILE.tmp"
	mv "$ENVFILE.tmp" "$ENVFILE"
}

cmd_status() {
	if [ -f "$STATE/admin.kubeconfig" ] && kctl get --raw /readyz >/dev/null 2>&1; then
		log "kube: the private cluster answers at $(sed -n 's/^ *server: //p' "$STATE/admin.kubeconfig")"
		cat "$ENVFILE" 2>/dev/null || true
		return 0
	fi
	log "kube: the private cluster is not running (state $STATE)"
	return 1
}

# ---- teardown -----------------------------------------------------------

# our_pids prints the pids of this cluster's daemons and shims: etcd,
# containerd, containerd-shim*, kube-* whose command line names the state
# dir or containerd's socket.
our_pids() {
	local f exe
	{ grep -alsF -e "$STATE" -e "$SOCK" /proc/[0-9]*/cmdline || true; } | while read -r f; do
		exe="$(tr '\0' '\n' 2>/dev/null <"$f" | head -n 1)" || continue
		case "${exe##*/}" in
		etcd | containerd | containerd-shim* | kube-*)
			f="${f#/proc/}"
			printf '%s\n' "${f%/cmdline}"
			;;
		esac
	done
}

# shim_pids prints the pids of our containerd's shims.
shim_pids() {
	local p
	for p in $(our_pids); do
		case "$(tr '\0' '\n' 2>/dev/null <"/proc/$p/cmdline" | head -n 1)" in
		*containerd-shim*) printf '%s\n' "$p" ;;
		esac
	done
}

# cgroup_pids prints the pids in the kubelet's cgroup root $1 (the pods'
# processes), in every hierarchy.
cgroup_pids() {
	local f
	for f in /sys/fs/cgroup/*"$1"/ /sys/fs/cgroup"$1"/; do
		[ -d "$f" ] || continue
		find "$f" -name cgroup.procs -exec cat {} + 2>/dev/null || true
	done | sort -u
}

# stop NAME...: TERM the named daemons (their sessions), wait up to 10s,
# then KILL.
stop() {
	local name pid pids=
	for name in "$@"; do
		[ -f "$STATE/$name.pid" ] || continue
		pid="$(cat "$STATE/$name.pid")"
		rm -f "$STATE/$name.pid"
		if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then continue; fi
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
		pids="$pids $pid"
	done
	if ! wait_gone "$pids" 10; then
		for pid in $pids; do
			kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
		done
		wait_gone "$pids" 5 || true
	fi
}

# shim_socket PID prints the ttrpc socket a containerd-shim-runc-v2 of ours
# listens on: /run/containerd/s/sha256(address/namespace/id) (containerd
# 1.6 puts it there whatever its state dir; a killed shim leaves it).
shim_socket() {
	local args id ns addr
	args="$(tr '\0' '\n' 2>/dev/null <"/proc/$1/cmdline")" || return 0
	id="$(printf '%s\n' "$args" | sed -n '/^-id$/{n;p;}')"
	ns="$(printf '%s\n' "$args" | sed -n '/^-namespace$/{n;p;}')"
	addr="$(printf '%s\n' "$args" | sed -n '/^-address$/{n;p;}')"
	[ -n "$id" ] && [ -n "$ns" ] && [ -n "$addr" ] || return 0
	printf '/run/containerd/s/%s\n' "$(printf '%s' "$addr/$ns/$id" | sha256sum | cut -d' ' -f1)"
}

cmd_down() {
	if [ ! -d "$STATE" ]; then
		rm -f "$ENVFILE"
		return 0
	fi
	if ! is_linux || ! is_root; then die "kube: stopping the cluster needs root on Linux"; fi
	local t0 cg br netns="" p pids socks="" m left
	t0="$(now)"
	# What this cluster made, as its state records it.
	cg="$(sed -n 's/^cgroupRoot: //p' "$STATE/kubelet/config.yaml" 2>/dev/null)" || true
	cg="${cg:-$CGROUP_ROOT}"
	br="$(sed -n 's/.*"bridge": "\([^"]*\)".*/\1/p' "$STATE/cni/net.d/10-cordon.conflist" 2>/dev/null)" || true
	br="${br:-$BRIDGE}"
	# Pods first (grace 0), while the kubelet still runs: it stops their
	# sandboxes, so the shims exit on their own.
	if [ -f "$STATE/admin.kubeconfig" ] && kctl get --raw /readyz >/dev/null 2>&1; then
		kctl delete pods --all --all-namespaces --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
		for _ in $(seq 1 50); do
			[ -n "$(shim_pids)" ] || break
			sleep 0.2
		done
	fi
	stop kubelet scheduler controller-manager apiserver
	# Whatever still runs in the pods' cgroups.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		pids="$(cgroup_pids "$cg" | tr '\n' ' ')"
		[ -n "${pids// /}" ] || break
		# shellcheck disable=SC2086 # one pid per word
		kill -KILL $pids 2>/dev/null || true
		sleep 0.2
	done
	# Through containerd: the network namespaces its sandboxes use, and
	# every task deleted (their shims then exit and remove their sockets).
	if cctl version >/dev/null 2>&1; then
		for p in $(cctl containers ls -q 2>/dev/null); do
			netns="$netns $(cctl containers info "$p" 2>/dev/null | grep -o '/run/netns/[A-Za-z0-9_.-]*' | sort -u | tr '\n' ' ' || true)"
		done
		for p in $(cctl tasks ls -q 2>/dev/null); do
			cctl tasks delete -f "$p" >/dev/null 2>&1 || true
		done
	else
		# containerd is gone: CNI namespaces no process uses any more.
		for m in /run/netns/cni-*; do
			[ -e "$m" ] || continue
			ip netns pids "${m##*/}" 2>/dev/null | grep -q . || netns="$netns $m"
		done
	fi
	stop containerd etcd
	# Leftover processes (shims of a killed containerd): KILL, and remove
	# the sockets they leave.
	pids="$(our_pids | tr '\n' ' ')"
	if [ -n "${pids// /}" ]; then
		for p in $pids; do socks="$socks $(shim_socket "$p")"; done
		log "kube: killing leftover processes: $pids"
		# shellcheck disable=SC2086 # one pid per word
		kill -KILL $pids 2>/dev/null || true
		wait_gone "$pids" 5 || true
		# shellcheck disable=SC2086 # one path per word
		rm -f $socks
	fi
	# Mounts under the state and socket dirs, deepest first.
	awk -v s="$STATE/" -v d="$SOCKDIR/" 'index($5, s) == 1 || index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || warn "kube: could not unmount $m"
		done
	for m in $netns; do
		ip netns delete "${m##*/}" 2>/dev/null || { umount -l "$m" 2>/dev/null || true; rm -f "$m"; }
	done
	ip link delete "$br" 2>/dev/null || true
	# The kubelet's cgroups, deepest first.
	for m in /sys/fs/cgroup/*"$cg" /sys/fs/cgroup"$cg"; do
		if [ -d "$m" ]; then
			find "$m" -depth -type d -exec rmdir {} \; 2>/dev/null || true
		fi
	done
	rm -rf "$STATE" "$ENVFILE"
	case "$SOCKDIR" in /run/cordon-kube-*) rm -rf "$SOCKDIR" ;; esac
	left="$(our_pids | tr '\n' ' ')"
	[ -z "${left// /}" ] || die "kube: processes of the private cluster survived: $left"
	m="$(awk -v s="$STATE/" 'index($5, s) == 1 { print $5 }' /proc/self/mountinfo)"
	[ -z "$m" ] || die "kube: mounts survived: $m"
	log "kube: cluster down in $(since "$t0"); no process, mount, bridge or cgroup of it is left"
}

case "${1:-}" in
build) cmd_build ;;
image) cmd_image ;;
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
env)
	[ -r "$ENVFILE" ] || die "kube: no env file ($ENVFILE); scripts/kube.sh up"
	cat "$ENVFILE"
	;;
*) die "usage: scripts/kube.sh build|image|up|down|status|env" ;;
esac
