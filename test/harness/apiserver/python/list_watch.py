"""List and watch through the official Kubernetes Python client (Debian's python3-kubernetes),
against the server named by the kubeconfig given: prints what the client saw as one JSON object.

    python3 list_watch.py KUBECONFIG NAMESPACE
"""
import json
import sys

from kubernetes import client, config, watch


def secret(name):
    return client.V1Secret(metadata=client.V1ObjectMeta(name=name), string_data={"key": name})


def first_events(stream, count):
    seen = []
    for event in stream:
        seen.append({"type": event["type"], "name": event["object"].metadata.name})
        if len(seen) == count:
            break
    return seen


def main(kubeconfig, namespace):
    config.load_kube_config(config_file=kubeconfig)
    core = client.CoreV1Api()
    core.create_namespaced_secret(namespace, secret("first"))
    listed = core.list_namespaced_secret(namespace)
    result = {"listed": [item.metadata.name for item in listed.items]}

    # Without a resourceVersion: the current objects as ADDED, then changes.
    w = watch.Watch()
    stream = w.stream(core.list_namespaced_secret, namespace, timeout_seconds=10)
    result["withoutResourceVersion"] = first_events(stream, 1)
    w.stop()

    # From the list's resourceVersion: only what changed after it.
    core.create_namespaced_secret(namespace, secret("second"))
    w = watch.Watch()
    stream = w.stream(core.list_namespaced_secret, namespace, resource_version=listed.metadata.resource_version, timeout_seconds=10)
    result["fromResourceVersion"] = first_events(stream, 1)
    w.stop()
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
