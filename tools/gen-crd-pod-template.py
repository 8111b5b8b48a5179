#!/usr/bin/env python3
"""Writes the IPUJob CRD's worker template schema (spec.workers.template) from Kubernetes' PodTemplateSpec.

With the whole PodTemplateSpec in the CRD, the API server refuses a mistyped template at `kubectl apply`
instead of the operator failing to create the job's pods later. The schema comes from the OpenAPI v3 document
api/openapi-spec/v3/api__v1_openapi.json of the Go module k8s.io/kubernetes at tools/versions.env's
KUBERNETES_VERSION, found in the Go module cache (`go env GOMODCACHE`; tools/build-tools.sh downloads it). The
script rewrites the `template:` block of crds/ipujobs.graphcore.ai.yaml and of the chart's copy
(deploy/helm/ipu-operator/crds/) and leaves every other line of both files as it is. Run it again after a
Kubernetes version bump; the output is deterministic, so a second run changes nothing.

What the schema keeps, and why:
  - every $ref inlined, with no descriptions (size) and no defaults (the API server would write them into
    stored IPUJobs; the pod API defaults the pods themselves);
  - only keywords a CRD's structural schema accepts; IntOrString as x-kubernetes-int-or-string, Quantity untyped;
  - the template's metadata typed only for labels and annotations: the pod API checks the rest on create;
  - x-kubernetes-list-type map only where every key is required and the pod API itself refuses duplicate keys
    (see DUPLICATES_ACCEPTED); other keyed lists become atomic, which refuses nothing;
  - the IPUJob's own constraints on top (EXTRA): a spec, at least one container, each with a name and image.

Usage: tools/gen-crd-pod-template.py [--check] [--openapi PATH]
  --check    write nothing; exit 1, naming each file, when a CRD file differs from what would be written (CI)
  --openapi  the OpenAPI v3 document to read instead of the Go module's
Exit status: 0 written or up to date; 1 a file differs (--check); 2 usage or input error; 77 the Go module's
document is not on this machine (run tools/build-tools.sh), which the ctest of --check reports as skipped.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRD_FILES = ("crds/ipujobs.graphcore.ai.yaml", "deploy/helm/ipu-operator/crds/ipujobs.graphcore.ai.yaml")
OPENAPI_IN_MODULE = os.path.join("api", "openapi-spec", "v3", "api__v1_openapi.json")
SKIPPED = 77
WIDTH = 110  # the longest line written, as the C++ sources' column limit

REF_PREFIX = "#/components/schemas/"
CORE = "io.k8s.api.core.v1."
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
ROOT = CORE + "PodTemplateSpec"

STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
# Types whose schema is not their OpenAPI definition. ObjectMeta: a template's metadata only feeds the pods'
# labels and annotations; the rest (name, namespace, owner references...) is set by the operator or checked by
# the pod API, so it is kept as written but not typed.
SPECIAL = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"x-kubernetes-int-or-string": True},
    # Untyped: a Pod takes a quantity as a string, an integer or a decimal number (`cpu: 0.5`), which no
    # structural type expresses; the pod API checks it when the worker pod is created.
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"x-kubernetes-preserve-unknown-fields": True},
    META + "Time": {"type": "string", "format": "date-time"},
    META + "MicroTime": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.runtime.RawExtension": {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    },
    META + "ObjectMeta": {
        "type": "object",
        "properties": {"annotations": STRING_MAP, "labels": STRING_MAP},
        "x-kubernetes-preserve-unknown-fields": True,
    },
}

# Lists Kubernetes keys (x-kubernetes-list-type map or set) whose duplicates the pod API nevertheless accepts,
# at most with a warning (k8s.io/kubernetes pkg/api/pod/warnings.go, pkg/apis/core/validation): as keyed
# lists in a CRD they would refuse templates that a Pod accepts, so they are written atomic. Review on a
# version bump.
DUPLICATES_ACCEPTED = {
    (CORE + "Container", "env"): "a later variable hides an earlier one (a warning)",
    (CORE + "EphemeralContainer", "env"): "as Container.env",
    (CORE + "Container", "ports"): "a duplicate port is a warning; protocol, a key, is optional",
    (CORE + "EphemeralContainer", "ports"): "as Container.ports",
    (CORE + "PodSpec", "hostAliases"): "a duplicate ip is a warning",
    (CORE + "PodSpec", "imagePullSecrets"): "a duplicate name is a warning; name, the key, is optional",
    (CORE + "ResourceRequirements", "claims"): "one claim's name appears once per request it uses",
    (CORE + "ContainerRestartRuleOnExitCodes", "values"): "duplicate exit codes are not checked",
}

# The IPUJob's own constraints, by path below the template (property names; [] for a list's items).
TEMPLATE_DESCRIPTION = (
    "The worker pods' template (a PodTemplateSpec). The operator adds what Poplar needs. Changes apply to "
    "worker pods created afterwards (on a restart), not to running ones."
)
EXTRA = {
    (): {"required": ["spec"], "description": TEMPLATE_DESCRIPTION},
    ("spec",): {"required": ["containers"]},
    ("spec", "containers"): {"minItems": 1, "maxItems": 64},
    ("spec", "containers", "[]"): {"required": ["image", "name"]},
    ("spec", "containers", "[]", "name"): {"maxLength": 63},
    ("spec", "containers", "[]", "image"): {"minLength": 1},
}

# The formats here that a CRD's schema validates (integer widths, timestamps); the API server strips others.
FORMATS = {"int32", "int64", "date-time"}
# The order keywords are written in: what a node is first, its children last.
KEYWORD_ORDER = (
    "type", "format", "anyOf", "enum", "required", "minItems", "maxItems", "minLength", "maxLength",
    "description", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-map-type", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "additionalProperties",
    "items", "properties",
)
# OpenAPI keywords with no place in a CRD schema (documentation, patch strategies, unions, defaults).
DROPPED = {
    "description", "default", "example", "x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy",
    "x-kubernetes-unions", "x-kubernetes-group-version-kind",
}


class InputError(Exception):
    pass


class Converter:
    def __init__(self, schemas):
        self.schemas = schemas
        self.keyed_lists = set()  # (type, field) of every keyed list met

    def named(self, name, stack):
        if name in SPECIAL:
            return json.loads(json.dumps(SPECIAL[name]))
        if name not in self.schemas:
            raise InputError(f"{name} is referenced but not defined")
        if name in stack:
            raise InputError("recursive schema: " + " -> ".join(stack + (name,)))
        return self.node(self.schemas[name], stack + (name,))

    def node(self, source, stack):
        """The CRD schema of one OpenAPI schema node (stack: the named types it is inside)."""
        source = dict(source)
        out = {}
        ref = source.pop("$ref", None)
        all_of = source.pop("allOf", None)
        if all_of is not None:
            # OpenAPI v3 wraps a reference as allOf: [{$ref}] so that it can carry its own description.
            if len(all_of) != 1 or set(all_of[0]) != {"$ref"}:
                raise InputError(f"allOf other than one $ref in {stack[-1]}")
            ref = all_of[0]["$ref"]
        if ref is not None:
            if not ref.startswith(REF_PREFIX):
                raise InputError(f"unexpected reference {ref} in {stack[-1]}")
            out = self.named(ref[len(REF_PREFIX):], stack)
        for key, value in source.items():
            if key in DROPPED:
                continue
            if key == "type":
                out["type"] = value
            elif key == "format":
                if value in FORMATS:
                    out["format"] = value
            elif key == "properties":
                out["properties"] = {name: self.node(child, stack) for name, child in value.items()}
                for name, child in out["properties"].items():
                    self.list_type(child, stack[-1], name)
            elif key in ("items", "additionalProperties"):
                if not isinstance(value, dict):
                    raise InputError(f"{key}: {value} in {stack[-1]} is not a schema")
                out[key] = self.node(value, stack)
            elif key == "required":
                out[key] = sorted(value)  # its order means nothing; sorted, a version bump's diff is smaller
            elif key in ("enum", "x-kubernetes-list-map-keys"):
                out[key] = list(value)
            elif key in ("x-kubernetes-list-type", "x-kubernetes-map-type"):
                out[key] = value
            else:
                raise InputError(f"keyword {key} in {stack[-1]} is not handled")
        if out.get("type") == "object" and "properties" not in out and "additionalProperties" not in out:
            out["x-kubernetes-preserve-unknown-fields"] = True  # a free-form object
        return out

    def list_type(self, prop, owner, name):
        """Keeps a keyed list type only where a CRD may have it and it refuses nothing a Pod accepts."""
        kind = prop.get("x-kubernetes-list-type")
        if kind not in ("map", "set"):
            return
        self.keyed_lists.add((owner, name))
        atomic = (owner, name) in DUPLICATES_ACCEPTED
        if kind == "map":
            # The API server refuses a map list whose key is neither required nor defaulted, and this schema
            # has no defaults.
            required = set(prop["items"].get("required", ()))
            atomic = atomic or not set(prop["x-kubernetes-list-map-keys"]) <= required
        if atomic:
            prop["x-kubernetes-list-type"] = "atomic"
            prop.pop("x-kubernetes-list-map-keys", None)


def apply_extra(schema):
    for path, constraints in EXTRA.items():
        node = schema
        for step in path:
            node = node["items"] if step == "[]" else node["properties"][step]
        for key, value in constraints.items():
            if key == "required":
                node["required"] = sorted(set(node.get("required", ())) | set(value))
            else:
                node[key] = value


def check_structural(node, where="template"):
    """The CRD rules this schema could break, checked here so that a version bump fails here, not at apply."""
    problems = []
    unknown = set(node) - set(KEYWORD_ORDER)
    if unknown:
        problems.append(f"{where}: keywords {sorted(unknown)}")
    if "type" not in node and not (node.get("x-kubernetes-int-or-string")
                                   or node.get("x-kubernetes-preserve-unknown-fields")):
        problems.append(f"{where}: no type")
    if "properties" in node and "additionalProperties" in node:
        problems.append(f"{where}: both properties and additionalProperties")
    if "x-kubernetes-map-type" in node and node.get("type") != "object":
        problems.append(f"{where}: x-kubernetes-map-type on a non-object")
    kind = node.get("x-kubernetes-list-type")
    if kind is not None and node.get("type") != "array":
        problems.append(f"{where}: x-kubernetes-list-type on a non-array")
    if kind == "map":
        items = node["items"]
        keys = node.get("x-kubernetes-list-map-keys", [])
        if not keys or items.get("type") != "object":
            problems.append(f"{where}: a map list needs keys and object items")
        for key in keys:
            prop = items.get("properties", {}).get(key)
            if prop is None or prop.get("type") in ("object", "array", None):
                problems.append(f"{where}: map key {key} is not a scalar property")
            if key not in items.get("required", ()):
                problems.append(f"{where}: map key {key} is not required")
    if kind == "set" and node["items"].get("type") in ("object", "array"):
        problems.append(f"{where}: a set of non-scalars")
    for name, child in node.get("properties", {}).items():
        problems += check_structural(child, f"{where}.{name}")
    for key in ("items", "additionalProperties"):
        if key in node:
            problems += check_structural(node[key], f"{where}[{key}]")
    return problems


# --- YAML: written here, as no YAML library is among the project's dependencies ---

PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if PLAIN.match(value) and value.lower() not in YAML_WORDS:
            return value
        return json.dumps(value)  # a JSON string is a YAML double-quoted scalar
    raise InputError(f"cannot write {value!r}")


def child_kind(kind, key):
    """What a mapping's value is: a schema, a mapping of property names to schemas, or a plain value."""
    if kind == "properties":
        return "schema"
    if key == "properties":
        return "properties"
    return "schema" if key in ("items", "additionalProperties", "anyOf") else "value"


def entries(mapping, kind):
    if kind == "schema":  # keywords in KEYWORD_ORDER; property names sorted
        return sorted(mapping.items(), key=lambda item: KEYWORD_ORDER.index(item[0]))
    return sorted(mapping.items())


def flow(value, kind):
    if isinstance(value, dict):
        pairs = (f"{scalar(k)}: {flow(v, child_kind(kind, k))}" for k, v in entries(value, kind))
        return "{" + ", ".join(pairs) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(v, kind) for v in value) + "]"
    return scalar(value)


def block(mapping, indent, kind="schema"):
    """The lines of a mapping at `indent` spaces: flow style for whatever fits on its line."""
    pad = " " * indent
    lines = []
    for key, value in entries(mapping, kind):
        name = scalar(key)
        if kind == "schema" and key == "description":
            text = f"{pad}{name}: {scalar(value)}"
            if len(text) <= WIDTH:
                lines.append(text)
            else:  # folded: its lines are joined with spaces, so they break only at spaces
                lines.append(f"{pad}{name}: >-")
                lines += [pad + "  " + line for line in textwrap.wrap(
                    value, WIDTH - indent - 2, break_long_words=False, break_on_hyphens=False)]
            continue
        sub = child_kind(kind, key)
        text = f"{pad}{name}: {flow(value, sub)}"
        if len(text) <= WIDTH or not isinstance(value, dict):
            lines.append(text)
        else:
            lines.append(f"{pad}{name}:")
            lines += block(value, indent + 2, sub)
    return lines


# --- the CRD files ---

def template_block(lines, path):
    """(first, indent, end): the outermost `template:` line (spec.workers.template), its indentation and the
    line after its block."""
    starts = {i: len(line) - len(line.lstrip()) for i, line in enumerate(lines)
              if re.match(r"^ *template:\s*$", line)}
    indent = min(starts.values(), default=None)
    outermost = [i for i, depth in starts.items() if depth == indent]
    if len(outermost) != 1:
        raise InputError(f"{path}: expected one `template:` line, found {len(outermost)}")
    first = outermost[0]
    end = first + 1
    while end < len(lines):
        line = lines[end]
        if line.strip() and (len(line) - len(line.lstrip())) <= indent:
            break
        end += 1
    return first, indent, end


def rewritten(text, path, schema, version):
    lines = text.split("\n")
    first, indent, end = template_block(lines, path)
    pad = " " * (indent + 2)
    note = (f"Generated by tools/gen-crd-pod-template.py from Kubernetes {version}'s PodTemplateSpec: change "
            "the script and run it, not this block.")
    body = [pad + "# " + line for line in textwrap.wrap(note, WIDTH - indent - 4, break_on_hyphens=False)]
    body += block(schema, indent + 2)
    return "\n".join(lines[:first + 1] + body + lines[end:])


def kubernetes_version():
    path = os.path.join(REPO, "tools", "versions.env")
    with open(path, encoding="utf-8") as f:
        for line in f:
            match = re.match(r"^KUBERNETES_VERSION=(\S+)\s*$", line)
            if match:
                return match.group(1)
    raise InputError(f"{path} has no KUBERNETES_VERSION")


def module_cache():
    if os.environ.get("GOMODCACHE"):
        return os.environ["GOMODCACHE"]
    go = shutil.which("go")
    if go:
        env = dict(os.environ, GOTOOLCHAIN="local")  # never download a toolchain to answer this
        result = subprocess.run([go, "env", "GOMODCACHE"], capture_output=True, text=True, env=env, cwd="/")
        if result.returncode == 0 and result.stdout.strip():
            return result.stdout.strip()
    gopath = os.environ.get("GOPATH", "").split(os.pathsep)[0] or os.path.join(os.path.expanduser("~"), "go")
    return os.path.join(gopath, "pkg", "mod")


def main():
    parser = argparse.ArgumentParser(
        description="Writes the IPUJob CRD's worker template schema from Kubernetes' PodTemplateSpec.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a CRD file differs from what would be written")
    parser.add_argument("--openapi", metavar="PATH",
                        help="the OpenAPI v3 document (default: the Go module's)")
    args = parser.parse_args()
    try:
        version = kubernetes_version()
        openapi = args.openapi
        if openapi is None:
            openapi = os.path.join(module_cache(), f"k8s.io/kubernetes@{version}", OPENAPI_IN_MODULE)
            if not os.path.isfile(openapi):
                print(f"gen-crd-pod-template: {openapi} is missing: run tools/build-tools.sh (it downloads "
                      f"k8s.io/kubernetes {version}) or give --openapi PATH", file=sys.stderr)
                return SKIPPED
        try:
            with open(openapi, encoding="utf-8") as f:
                schemas = json.load(f)["components"]["schemas"]
        except (OSError, ValueError, KeyError) as e:
            raise InputError(f"{openapi}: not an OpenAPI v3 document with components.schemas ({e})")
        converter = Converter(schemas)
        schema = converter.named(ROOT, ())
        apply_extra(schema)
        problems = check_structural(schema)
        # A list renamed or no longer keyed in a new release: its entry must be reviewed, not silently unused.
        problems += [f"DUPLICATES_ACCEPTED names {owner}.{name}, which is not a keyed list here"
                     for owner, name in sorted(set(DUPLICATES_ACCEPTED) - converter.keyed_lists)]
        if problems:
            raise InputError("nothing written; to review:\n  " + "\n  ".join(problems))
        stale = []
        for relative in CRD_FILES:
            path = os.path.join(REPO, relative)
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
            new = rewritten(text, relative, schema, version)
            if new == text:
                continue
            stale.append(relative)
            if not args.check:
                with open(path, "w", encoding="utf-8", newline="") as f:
                    f.write(new)
                print(f"gen-crd-pod-template: wrote {relative} ({len(new.encode())} bytes)")
    except (InputError, OSError) as e:
        print(f"gen-crd-pod-template: {e}", file=sys.stderr)
        return 2
    if args.check and stale:
        for relative in stale:
            print(f"gen-crd-pod-template: {relative}: its worker template schema is not Kubernetes "
                  f"{version}'s PodTemplateSpec as this script writes it; run tools/gen-crd-pod-template.py",
                  file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
