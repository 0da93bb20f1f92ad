"""The Kubernetes recipe of issue 37 (deploy/kubernetes, docs/executors.md "Kubernetes"),
checked without a cluster:

- every manifest is valid for its schema: the built-in kinds against Kubernetes' own OpenAPI
  schemas (the ``kubernetes-validate`` package, strict: an unknown field is an error), the
  kubernetes-sigs agent-sandbox ``Sandbox`` and ``SandboxTemplate`` against the
  ``openAPIV3Schema`` of their CRDs (vendored in agent_sandbox_crds/, source in its README),
  made strict the way the API server's strict field validation is; planted mistakes fail;
- the hosts' config (host.yaml's ConfigMap) is a valid callgate user config whose transport
  is callgate-session-worker, and the names agree: pod ``callgate-<session id>``, container
  ``worker``;
- callgate-session-worker itself, run by ``callgate replay`` as that transport with a
  ``kubectl`` that records what it is asked and runs the worker here: it applies the
  session's manifest (valid, named for the session) and then speaks the protocol.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")
kubernetes_validate = pytest.importorskip("kubernetes_validate")
import jsonschema  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy" / "kubernetes"
CRDS = Path(__file__).resolve().parent / "agent_sandbox_crds"
KUBERNETES = "1.37.0"
SESSION = uuid.uuid4().hex
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _strict(schema: Any) -> Any:
    """An openAPIV3Schema as the API server's strict field validation applies it: an object
    with ``properties`` takes no other field unless the schema keeps unknown fields."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items()}
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def _crd_schemas() -> dict[tuple[str, str], Any]:
    """``(apiVersion, kind)`` → the strict schema of that served version."""
    found: dict[tuple[str, str], Any] = {}
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if version.get("served"):
                schema = _strict(version["schema"]["openAPIV3Schema"])
                # metadata is the API server's ObjectMeta: its name is checked below
                schema["properties"]["metadata"] = {"type": "object"}
                found[(f"{group}/{version['name']}", kind)] = schema
    return found


CRD_SCHEMAS = _crd_schemas()


def problems(doc: dict[str, Any]) -> list[str]:
    """What is wrong with one manifest (empty: valid)."""
    if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
        return ["a manifest has apiVersion and kind"]
    name = (doc.get("metadata") or {}).get("name")
    found: list[str] = []
    if not isinstance(name, str) or len(name) > 253 or not DNS_SUBDOMAIN.match(name):
        found.append(f"metadata.name {name!r} is not a DNS subdomain name")
    key = (doc["apiVersion"], doc["kind"])
    if key in CRD_SCHEMAS:
        validator = jsonschema.Draft7Validator(CRD_SCHEMAS[key])
        found += [
            f"{'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
            for e in validator.iter_errors(doc)
        ]
        return found
    if doc["kind"] in {kind for _, kind in CRD_SCHEMAS}:
        return [*found, f"{doc['kind']} is not served as {doc['apiVersion']}"]
    try:
        kubernetes_validate.validate(copy.deepcopy(doc), KUBERNETES, strict=True)
    except kubernetes_validate.ValidationError as exc:
        path = ".".join(map(str, exc.path)) or "(root)"
        found.append(f"{path}: {exc.message}")
    except kubernetes_validate.SchemaNotFoundError as exc:
        found.append(f"no schema for {doc['apiVersion']} {doc['kind']}: {exc}")
    return found


def _render(text: str) -> str:
    return text.replace("${SESSION_ID}", SESSION)


def manifests() -> Iterator[tuple[str, int, dict[str, Any]]]:
    for path in sorted(DEPLOY.rglob("*.yaml")):
        docs = list(yaml.safe_load_all(_render(path.read_text())))
        for index, doc in enumerate(d for d in docs if d is not None):
            yield str(path.relative_to(DEPLOY)), index, doc


ALL = list(manifests())


def test_the_recipe_has_the_manifests_it_documents() -> None:
    kinds = {doc["kind"] for _, _, doc in ALL}
    assert {
        "Deployment",
        "Service",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ConfigMap",
        "Pod",
        "Sandbox",
        "SandboxTemplate",
    } <= kinds
    # every CRD kind is checked against a vendored CRD, not skipped
    assert {
        ("agents.x-k8s.io/v1beta1", "Sandbox"),
        ("extensions.agents.x-k8s.io/v1beta1", "SandboxTemplate"),
    } <= set(CRD_SCHEMAS)


@pytest.mark.parametrize(
    ("file", "index", "doc"), ALL, ids=[f"{f}#{i}:{d['kind']}" for f, i, d in ALL]
)
def test_every_manifest_is_valid_for_its_schema(file: str, index: int, doc: dict[str, Any]) -> None:
    assert problems(doc) == [], (file, index)


def _find(kind: str, file: str | None = None) -> dict[str, Any]:
    return copy.deepcopy(next(d for f, _, d in ALL if d["kind"] == kind and f == (file or f)))


def _planted() -> list[tuple[str, dict[str, Any], str]]:
    deployment = _find("Deployment")
    deployment["spec"]["template"]["spec"]["contaners"] = deployment["spec"]["template"][
        "spec"
    ].pop("containers")
    unknown = _find("Deployment")
    unknown["spec"]["template"]["spec"]["hostPIDs"] = True
    pod = _find("Pod")
    pod["spec"]["containers"][0]["image"] = 5
    role = _find("Role")
    role["rules"][0]["verbs"] = "get"
    binding = _find("RoleBinding")
    del binding["roleRef"]["name"]
    sandbox = _find("Sandbox")
    sandbox["spec"]["podTemplat"] = sandbox["spec"].pop("podTemplate")
    policy = _find("Sandbox")
    policy["spec"]["shutdownPolicy"] = "Sometimes"
    typo = _find("Sandbox")
    typo["spec"]["podTemplate"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    template = _find("SandboxTemplate")
    del template["spec"]["podTemplate"]["spec"]["containers"][0]["name"]
    version = _find("Sandbox")
    version["apiVersion"] = "agents.x-k8s.io/v9"
    named = _find("Pod")
    named["metadata"]["name"] = "callgate-${SESSION_ID}"  # not rendered: not a DNS name
    return [
        ("a misspelled field of a Deployment", deployment, "containers"),
        ("an unknown field of a Deployment's pod", unknown, "hostPIDs"),
        ("a Pod's image that is not a string", pod, "image"),
        ("a Role's verbs that are not a list", role, "verbs"),
        ("a RoleBinding without its role's name", binding, "name"),
        ("a Sandbox without podTemplate", sandbox, "podTemplate"),
        ("a Sandbox shutdownPolicy outside its enum", policy, "Sometimes"),
        ("an unknown field deep in a Sandbox's pod", typo, "imagePullPolicyy"),
        ("a SandboxTemplate container without a name", template, "name"),
        ("a Sandbox of a version the CRD does not serve", version, "not served"),
        ("a name that is not a DNS name", named, "DNS"),
    ]


@pytest.mark.parametrize(("what", "doc", "says"), _planted(), ids=[p[0] for p in _planted()])
def test_a_planted_mistake_fails_the_check(what: str, doc: dict[str, Any], says: str) -> None:
    found = problems(doc)
    assert found, f"{what} passed the check"
    assert says in " ".join(found), found


def _host_config() -> dict[str, Any]:
    config_map = _find("ConfigMap", "host.yaml")
    return tomllib.loads(config_map["data"]["config.toml"])


def test_the_hosts_config_is_a_callgate_user_config_naming_the_session_pods() -> None:
    from callgate import sync

    config = _host_config()
    transport = config["executor"]["transport"]
    assert transport == ["callgate-session-worker", "{session_id}", "{workspace}"]
    with sync.Host.boot({"executor": config["executor"]}, entrypoints=False) as host:
        assert host.config("executor")["transport"] == transport
    script = (DEPLOY / "callgate-session-worker").read_text()
    assert "name=callgate-$session" in script and "-c worker" in script
    for _, _, doc in ALL:
        if doc["kind"] in ("Pod", "Sandbox"):
            assert doc["metadata"]["name"] == f"callgate-{SESSION}"
        if doc["kind"] in ("Pod", "Sandbox", "SandboxTemplate"):
            spec = doc["spec"] if doc["kind"] == "Pod" else doc["spec"]["podTemplate"]["spec"]
            assert [c["name"] for c in spec["containers"]] == ["worker"]
    deployment = _find("Deployment")
    assert (
        deployment["spec"]["template"]["spec"]["serviceAccountName"]
        == _find("ServiceAccount")["metadata"]["name"]
    )
    rules = {
        (r, v) for rule in _find("Role")["rules"] for r in rule["resources"] for v in rule["verbs"]
    }
    assert {("pods/exec", "create"), ("pods", "get")} <= rules


FAKE_KUBECTL = r'''#!/usr/bin/env python3
"""kubectl, as far as callgate-session-worker uses it: records each call; ``get`` finds
nothing, ``apply -f -`` keeps the manifest, ``wait`` succeeds, ``exec`` runs the worker
here with the pod's workspace under $FAKE_PODS/<pod>."""
import json, os, sys
args = sys.argv[1:]
log = os.environ["FAKE_KUBECTL_LOG"]
with open(log, "a") as fh:
    fh.write(json.dumps(args) + "\n")
if args[:2] == ["--namespace", os.environ.get("CALLGATE_SESSION_NAMESPACE", "")]:
    args = args[2:]
verb = args[0]
if verb == "get":
    sys.exit(1)
if verb == "apply":
    with open(log + ".applied", "a") as fh:
        fh.write(sys.stdin.read() + "\n---\n")
    print("pod/created")  # kubectl's chatter: must not reach the protocol
    sys.exit(0)
if verb == "wait":
    print("condition met")
    sys.exit(0)
if verb == "exec":
    pod = args[args.index("-i") + 1]
    rest = args[args.index("--") + 1:]
    assert rest[:3] == ["callgate", "worker", "--workspace"], rest
    root = os.path.join(os.environ["FAKE_PODS"], pod)
    workspace = root + rest[3]
    os.makedirs(workspace, exist_ok=True)  # a real pod has its workspace volume mounted
    os.execv(sys.executable, [sys.executable, "-m", "callgate_cli", "worker", "--workspace",
                              workspace])
sys.exit(f"fake kubectl: {verb} is not faked")
'''


@pytest.mark.parametrize(
    ("kind", "applied_kind", "resource"),
    [("pod", "Pod", "pod"), ("sandbox", "Sandbox", "sandbox.agents.x-k8s.io")],
)
def test_the_session_worker_script_applies_the_sessions_pod_and_serves_its_tools(
    tmp_path: Path, user_config: Path, kind: str, applied_kind: str, resource: str
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(FAKE_KUBECTL.replace("#!/usr/bin/env python3", f"#!{sys.executable}"))
    kubectl.chmod(0o755)
    pods = tmp_path / "pods"
    log = tmp_path / "kubectl.log"
    executor = dict(_host_config()["executor"])
    executor["transport"] = [str(DEPLOY / "callgate-session-worker"), *executor["transport"][1:]]
    (user_config / "config.toml").write_text(
        "[executor]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in executor.items())
    )
    workspace = "/workspace"
    lines = [
        {"name": "write_file", "arguments": {"path": "made.txt", "content": "in the pod\n"}},
        {"name": "bash", "arguments": {"command": "cat made.txt; pwd"}},
    ]

    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_KUBECTL_LOG": str(log),
        "FAKE_PODS": str(pods),
        "CALLGATE_SESSION_NAMESPACE": "callgate",
        "CALLGATE_SESSION_KIND": kind,
    }
    done = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", "-", "--workspace", workspace],
        input="\n".join(map(json.dumps, lines)) + "\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [r["is_error"] for r in results] == [False, False], results
    assert "in the pod" in results[1]["content"]
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    verbs = [c[2] for c in calls]
    assert verbs == ["get", "apply", "wait", "exec"], calls
    assert all(c[:2] == ["--namespace", "callgate"] for c in calls)
    [applied] = [d for d in yaml.safe_load_all(Path(f"{log}.applied").read_text()) if d]
    assert applied["kind"] == applied_kind and problems(applied) == []
    pod = applied["metadata"]["name"]
    session = pod.removeprefix("callgate-")
    assert re.fullmatch(r"[0-9a-f]{32}", session) and calls[3][4] == pod
    assert calls[0][3:] == [resource, pod]  # get
    assert calls[2][3:] == ["--for=condition=Ready", f"{resource}/{pod}", "--timeout=120s"]
    assert (pods / pod / "workspace" / "made.txt").read_text() == "in the pod\n"
