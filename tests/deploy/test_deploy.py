"""deploy/: the Kubernetes and compose manifests parse and give gpreemptd what it needs (host PID,
/dev/kfd, debugfs, SYS_PTRACE, the config and the socket directory); the systemd unit passes
`systemd-analyze verify` without a warning and keeps its hardening compatible with ptrace."""
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="python3-yaml (scripts/install-deps.sh)")

SOURCE = Path(os.environ.get("GPREEMPT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
DEPLOY = SOURCE / "deploy"


def load_all(rel):
    return [d for d in yaml.safe_load_all((DEPLOY / rel).read_text()) if d is not None]


def test_every_manifest_parses():
    files = sorted(DEPLOY.rglob("*.yaml")) + sorted(DEPLOY.rglob("*.yml"))
    assert len(files) >= 5
    for f in files:
        docs = [d for d in yaml.safe_load_all(f.read_text()) if d is not None]
        assert docs, f


def test_daemonset_has_what_the_daemon_needs():
    (ds,) = load_all("kubernetes/daemonset.yaml")
    assert ds["kind"] == "DaemonSet"
    spec = ds["spec"]["template"]["spec"]
    assert spec["hostPID"] is True
    (c,) = spec["containers"]
    caps = c["securityContext"]["capabilities"]
    assert caps["drop"] == ["ALL"] and caps["add"] == ["SYS_PTRACE"]
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert set(mounts) <= set(volumes), "a mount without a volume"
    # /dev/kfd comes through CDI (the device cgroup), from the spec shipped beside it.
    (cdi,) = load_all("kubernetes/cdi-kfd.yaml")
    wanted = ds["spec"]["template"]["metadata"]["annotations"]["cdi.k8s.io/gpreemptd"]
    kind, name = wanted.split("=")
    assert cdi["kind"] == kind and name in [d["name"] for d in cdi["devices"]]
    (dev,) = next(d for d in cdi["devices"] if d["name"] == name)["containerEdits"]["deviceNodes"]
    assert dev["path"] == "/dev/kfd"
    assert volumes["debugfs"]["hostPath"]["path"] == "/sys/kernel/debug" and mounts["debugfs"] == "/sys/kernel/debug"
    assert volumes["run"]["hostPath"]["path"] == "/run/gpreempt"
    (cm,) = load_all("kubernetes/configmap.yaml")
    assert volumes["config"]["configMap"]["name"] == cm["metadata"]["name"]
    assert cm["metadata"]["namespace"] == ds["metadata"]["namespace"]
    config_path = mounts["config"] + "/gpreemptd.toml"
    assert c["command"][c["command"].index("--config") + 1] == config_path
    # The metrics port the config listens on is the one the pod declares and Prometheus scrapes.
    toml = tomllib.loads(cm["data"]["gpreemptd.toml"])
    port = int(toml["daemon"]["metrics"].rsplit(":", 1)[1])
    assert c["ports"][0]["containerPort"] == port
    assert ds["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"] == str(port)
    # The socket the pods mount is where the daemon listens.
    assert toml["daemon"]["socket"].startswith(mounts["run"] + "/")
    # Container and pod names: each runtime root the config names is the host's, mounted read-only.
    readonly = {m["mountPath"] for m in c["volumeMounts"] if m.get("readOnly")}
    host_of = {mounts[n]: v["hostPath"]["path"] for n, v in volumes.items() if "hostPath" in v and n in mounts}
    roots = {k: v for k, v in toml["daemon"].items() if k.endswith("_root")}
    assert {"containerd_root", "crio_root", "docker_root"} <= set(roots)
    for key, root in roots.items():
        if root == "":
            continue  # that runtime is not looked at
        assert root in readonly, f"{key} {root} is not mounted read-only"
        assert host_of[root] == root, f"{key}: the host's {root} is expected there"


def test_example_pods_name_their_class():
    pods = {p["metadata"]["name"]: p for p in load_all("kubernetes/example-pods.yaml")}
    assert set(pods) == {"online-inference", "offline-training"}
    env = {e["name"]: e["value"] for e in pods["offline-training"]["spec"]["containers"][0]["env"]}
    assert env["GPREEMPT_CLASS"] == "offline"


def test_compose_has_daemon_online_and_offline():
    (compose,) = load_all("compose/docker-compose.yml")
    services = compose["services"]
    assert set(services) == {"gpreemptd", "online", "offline"}
    d = services["gpreemptd"]
    assert d["pid"] == "host" and d["cap_add"] == ["SYS_PTRACE"] and "/dev/kfd" in d["devices"]
    assert "GPREEMPT_CLASS" not in services["online"]["environment"]
    assert services["offline"]["environment"]["GPREEMPT_CLASS"] == "offline"
    config = next(v for v in d["volumes"] if v.endswith(":/etc/gpreempt/gpreemptd.toml:ro"))
    assert (DEPLOY / "compose" / config.split(":")[0]).is_file()


def unit_settings():
    settings = {}
    for line in (DEPLOY / "systemd/gpreemptd.service").read_text().splitlines():
        m = re.match(r"^([A-Za-z]+)=(.*)$", line)
        if m:
            settings.setdefault(m.group(1), []).append(m.group(2))
    return settings


def test_unit_keeps_ptrace_and_debugfs():
    s = unit_settings()
    assert s["Type"] == ["notify"]
    assert s["ExecReload"] == ["/bin/kill -HUP $MAINPID"]
    assert s["Restart"] == ["on-failure"]
    assert s["CapabilityBoundingSet"] == ["CAP_SYS_PTRACE CAP_SYS_NICE"]
    # The shipped config asks for SCHED_FIFO, which RestrictRealtime would refuse.
    assert "RestrictRealtime" not in s
    # Settings that would break the daemon must stay out.
    for key, bad in (("ProtectProc", None), ("ProcSubset", None), ("PrivateDevices", "yes"),
                     ("PrivatePIDs", "yes")):
        assert key not in s or (bad is not None and bad not in s[key]), key
    assert "/dev/kfd rw" in s["DeviceAllow"]
    assert "@debug" in s["SystemCallFilter"][0], "ptrace and pidfd_getfd are in @debug"


def test_unit_passes_systemd_analyze_verify():
    exe = shutil.which("systemd-analyze")
    if not exe:
        pytest.skip("systemd-analyze is not installed (Debian package systemd)")
    text = (DEPLOY / "systemd/gpreemptd.service").read_text()
    # verify checks that ExecStart exists: point it at a program this machine has.
    text = text.replace("ExecStart=/usr/bin/gpreemptd", "ExecStart=/bin/true")
    with tempfile.TemporaryDirectory() as d:
        unit = Path(d) / "gpreemptd.service"
        unit.write_text(text)
        r = subprocess.run([exe, "verify", str(unit)], capture_output=True, text=True, timeout=60)
    if r.returncode != 0 and "Failed to " in r.stderr and "manager" in r.stderr.lower():
        pytest.skip("systemd-analyze cannot run here: " + r.stderr.strip()[:200])
    assert r.returncode == 0, r.stderr
    # An unknown or misspelt key is only a warning (exit 0): fail on any output.
    assert r.stderr.strip() == "", r.stderr


def test_daemonset_is_not_privileged():
    """The DaemonSet runs with one capability, the runtime's seccomp profile, no privilege
    escalation and no service-account token (docs/security.md, "Kubernetes")."""
    (ds,) = load_all("kubernetes/daemonset.yaml")
    spec = ds["spec"]["template"]["spec"]
    assert spec["automountServiceAccountToken"] is False
    (c,) = spec["containers"]
    sc = c["securityContext"]
    assert sc.get("privileged", False) is False
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"], "add": ["SYS_PTRACE"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert sc["readOnlyRootFilesystem"] is True
    for v in spec["volumes"]:
        assert v.get("hostPath", {}).get("type") != "CharDevice", "a device by hostPath needs privileged"


def test_client_pods_mount_the_socket_read_only_without_a_token():
    pods = load_all("kubernetes/example-pods.yaml")
    for p in pods:
        assert p["spec"]["automountServiceAccountToken"] is False, p["metadata"]["name"]
        for c in p["spec"]["containers"]:
            for m in c.get("volumeMounts", []):
                if m["mountPath"] == "/run/gpreempt":
                    assert m.get("readOnly") is True, f"{p['metadata']['name']} may replace the socket"


def test_the_online_example_pod_is_online_by_what_it_cannot_set():
    """The ConfigMap's online class is Guaranteed QoS (requests == limits): the example online pod
    is Guaranteed and does not rely on GPREEMPT_CLASS."""
    pods = {p["metadata"]["name"]: p for p in load_all("kubernetes/example-pods.yaml")}
    (server,) = pods["online-inference"]["spec"]["containers"]
    r = server["resources"]
    for k in ("cpu", "memory"):
        assert r["requests"][k] == r["limits"][k], k
    assert "GPREEMPT_CLASS" not in {e["name"] for e in server.get("env", [])}


def test_metrics_are_guarded_where_they_listen_beyond_loopback():
    (cm,) = load_all("kubernetes/configmap.yaml")
    toml = tomllib.loads(cm["data"]["gpreemptd.toml"])
    port = int(toml["daemon"]["metrics"].rsplit(":", 1)[1])
    (np,) = load_all("kubernetes/networkpolicy.yaml")
    (ds,) = load_all("kubernetes/daemonset.yaml")
    assert np["spec"]["podSelector"]["matchLabels"] == ds["spec"]["selector"]["matchLabels"]
    assert set(np["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    (rule,) = np["spec"]["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": port}] and rule["from"], "ingress from anywhere"
    (compose,) = load_all("compose/docker-compose.yml")
    assert all(p.startswith("127.0.0.1:") for p in compose["services"]["gpreemptd"]["ports"])


def test_compose_daemon_is_not_privileged_and_clients_mount_read_only():
    (compose,) = load_all("compose/docker-compose.yml")
    s = compose["services"]
    d = s["gpreemptd"]
    assert not d.get("privileged", False) and d["cap_drop"] == ["ALL"] and d["cap_add"] == ["SYS_PTRACE"]
    assert "no-new-privileges:true" in d["security_opt"]
    assert "gpreempt-run:/run/gpreempt:ro" in s["online"]["volumes"]
    # The online container is online by its name, which the config's rule names.
    config = tomllib.loads((DEPLOY / "compose/gpreemptd.toml").read_text())
    online = next(c for c in config["class"] if c["name"] == "online")
    assert online["match"] == {"container": s["online"]["container_name"]}


def test_unit_bounds_its_resources_and_network():
    s = unit_settings()
    assert s["MemoryMax"] and s["TasksMax"] and s["LimitNOFILE"]
    assert int(s["LimitNOFILE"][0]) > 1024
    assert s["IPAddressDeny"] == ["any"] and s["IPAddressAllow"] == ["localhost"]
    assert s["ProtectHome"] == ["yes"]
    # No OOM-score privilege over other users' jobs.
    assert all(int(v) >= 0 for v in s.get("OOMScoreAdjust", []))
    # The shipped config's metrics address is one IPAddressAllow lets through.
    config = tomllib.loads((DEPLOY / "systemd/gpreemptd.toml").read_text())
    assert config["daemon"]["metrics"].startswith("127.0.0.1:")
