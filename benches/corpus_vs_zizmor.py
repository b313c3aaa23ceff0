#!/usr/bin/env python3
"""Benchmark (not a test): warden and zizmor scored on tests/fixtures/labelled-corpus with one
rule. An `exposed` or `expression` job needs a finding that flags it; a `protected` or
`not-signing` (or unlabelled) job may not be flagged. warden: the findings that expose a job, and
the `unverifiable` finding of an expression environment; zizmor: `secrets-outside-env`, then
with `overprovisioned-secrets`, `dangerous-triggers` and `secrets-inherit` too.

    cargo build --release && pip install zizmor==1.32.0 && benches/corpus_vs_zizmor.py

WARDEN and ZIZMOR name other binaries; `benches/corpus_vs_zizmor.py warden` scores warden only.
"""
import json, os, subprocess, sys, tomllib
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
corpus = os.path.join(root, "tests/fixtures/labelled-corpus")
warden = os.environ.get("WARDEN", os.path.join(root, "target/release/warden"))
zizmor = os.environ.get("ZIZMOR", "zizmor")
EXPOSING = {"signing-secret-outside-environment", "signing-secrets-inherit", "signing-secret-to-remote-workflow", "secrets-context-to-untrusted-code"}
def warden_flags(case):
    out = subprocess.run([warden, "audit", "--offline", "--allow-empty", "--format", "json", "--root", case], capture_output=True, text=True).stdout
    flags = set()
    for f in json.loads(out)["findings"]:
        job = f["location"].get("job")
        if not job: continue
        wf = os.path.basename(f["location"].get("path", ""))
        if f["id"] in EXPOSING or (f["id"] == "unverifiable" and "its environment is the expression" in f["message"]):
            flags.add((wf, job))
    return flags
def zizmor_flags(case, idents):
    out = subprocess.run([zizmor, "--offline", "--persona", "auditor", "--format", "json", "--no-config", case], capture_output=True, text=True).stdout
    flags = set()
    try: found = json.loads(out)
    except Exception: return flags
    for f in found:
        if f["ident"] not in idents: continue
        for loc in f["locations"]:
            sym = loc["symbolic"]
            path = sym["key"].get("Local", {}).get("verbatim_path", "")
            route = [r.get("Key") for r in sym["route"]["route"]]
            if len(route) >= 2 and route[0] == "jobs":
                flags.add((os.path.basename(path), route[1]))
    return flags
def score(name, flagger):
    found = missed = forbidden = 0
    for case in sorted(os.listdir(corpus)):
        p = os.path.join(corpus, case, "labels.toml")
        if not os.path.isfile(p): continue
        labels = tomllib.load(open(p, "rb")).get("job", [])
        flags = flagger(os.path.join(corpus, case))
        labelled = {(l["workflow"], l["job"]): l["label"] for l in labels}
        for key, label in labelled.items():
            if label in ("exposed", "expression"):
                if key in flags: found += 1
                else: missed += 1
            elif key in flags: forbidden += 1
        forbidden += len([k for k in flags if k not in labelled])
    req = found + missed
    print(f"{name}: {found}/{req} ({100*found/req:.1f} %) recall, precision {100*found/max(1,found+forbidden):.1f} % ({forbidden} false alarms)")
which = sys.argv[1:] or ["warden", "zizmor"]
if "warden" in which: score("warden", warden_flags)
if "zizmor" in which:
    score("zizmor secrets-outside-env", lambda c: zizmor_flags(c, {"secrets-outside-env"}))
    score("zizmor + overprovisioned/dangerous-triggers/secrets-inherit", lambda c: zizmor_flags(c, {"secrets-outside-env", "overprovisioned-secrets", "dangerous-triggers", "secrets-inherit"}))
