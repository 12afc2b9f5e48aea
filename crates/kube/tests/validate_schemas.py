"""Validate rendered objects offline, for crates/kube/tests/all/schemas.rs.

usage: validate_schemas.py CRD_YAML VERSIONS DIR
Every DIR/*.json is one object. Built-in kinds are validated with kubernetes-validate
(strict: unknown fields are errors) for each Kubernetes version in VERSIONS
(comma-separated); a Sandbox against the v1beta1 OpenAPI v3 schema embedded in the CRD,
made strict the same way (an object schema that lists properties and neither sets
additionalProperties nor x-kubernetes-preserve-unknown-fields refuses other keys: the API
server would silently prune them, which for a security field is a silent loss), and its
metadata as the ObjectMeta of a built-in kind. Prints one JSON object: file -> [errors].
"""
import copy
import json
import os
import sys

import jsonschema
import kubernetes_validate
import yaml


def strict(node):
    if isinstance(node, dict):
        if (
            "properties" in node
            and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")
        ):
            node["additionalProperties"] = False
        for value in node.values():
            strict(value)
    elif isinstance(node, list):
        for value in node:
            strict(value)
    return node


def sandbox_schema(crd_path):
    with open(crd_path) as f:
        crd = yaml.safe_load(f)
    for version in crd["spec"]["versions"]:
        if version["name"] == "v1beta1":
            return strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))
    raise SystemExit("no v1beta1 version in the CRD")


def main():
    crd_path, versions, folder = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
    schema = sandbox_schema(crd_path)
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    report = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(folder, name)) as f:
            obj = json.load(f)
        errors = []
        if obj.get("kind") == "Sandbox":
            if obj.get("apiVersion") != "agents.x-k8s.io/v1beta1":
                errors.append("apiVersion is not agents.x-k8s.io/v1beta1")
            for e in validator.iter_errors(obj):
                errors.append("crd: %s at %s" % (e.message, "/".join(map(str, e.absolute_path))))
            # The CRD leaves metadata open; the API server checks it as ObjectMeta.
            probe = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj.get("metadata")}
            for v in versions:
                try:
                    kubernetes_validate.validate(probe, v, strict=True)
                except kubernetes_validate.ValidationError as e:
                    errors.append("%s metadata: %s" % (v, e.message))
        else:
            for v in versions:
                try:
                    kubernetes_validate.validate(obj, v, strict=True)
                except kubernetes_validate.ValidationError as e:
                    path = "/".join(map(str, getattr(e, "absolute_path", [])))
                    errors.append("%s: %s at %s" % (v, e.message, path))
                except kubernetes_validate.utils.SchemaNotFoundError as e:
                    errors.append("%s: no schema: %s" % (v, e.message))
        report[name] = errors
    print(json.dumps(report))


main()
