#!/usr/bin/env python3
"""Kueue's webhook configurations for a Kueue process running outside the cluster (tools/cluster/kueue.sh).

Reads config/components/webhook/manifests.yaml of the Kueue module and prints the Mutating- and
ValidatingWebhookConfigurations with only the webhooks of Kueue's own kinds (Workloads, ClusterQueues,
LocalQueues, ResourceFlavors, Cohorts, ...): the webhooks of the job kinds Kueue can manage (batch Jobs,
pods, ...) are left out, because this Kueue integrates none of them and their paths are not served (a Fail
policy on an unserved path would refuse every pod). Each webhook's service reference becomes
`url: https://<address>:<port><path>` with the CA bundle given.

Usage: kueue-webhooks.py MANIFESTS ADDRESS PORT CA_FILE > webhooks.yaml
"""
import base64
import sys

import yaml

KUEUE_GROUP = "kueue.x-k8s.io"


def main() -> int:
    manifests, address, port, ca_file = sys.argv[1:5]
    with open(ca_file, "rb") as f:
        ca_bundle = base64.b64encode(f.read()).decode()
    documents = [d for d in yaml.safe_load_all(open(manifests)) if d]
    out = []
    for document in documents:
        kept = []
        for webhook in document.get("webhooks", []):
            groups = {g for rule in webhook.get("rules", []) for g in rule.get("apiGroups", [])}
            if groups != {KUEUE_GROUP}:
                continue
            path = webhook["clientConfig"]["service"]["path"]
            webhook["clientConfig"] = {"url": f"https://{address}:{port}{path}", "caBundle": ca_bundle}
            kept.append(webhook)
        if not kept:
            continue
        document["webhooks"] = kept
        document["metadata"] = {"name": "kueue-" + document["metadata"]["name"]}
        out.append(document)
    if not out:
        print("kueue-webhooks: no webhook of kind group " + KUEUE_GROUP + " in " + manifests, file=sys.stderr)
        return 1
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
