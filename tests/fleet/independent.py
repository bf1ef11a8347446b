"""An independent pandas reading of the corpus: the figures the fleet report must reproduce.

Reads the snapshot files with json/gzip/yaml (not with lbctl) and computes every reported figure
with plain pandas/numpy, following the definitions in ``lbctl/fleet/report.py``'s docstring.
"""

from __future__ import annotations

import gzip
import json
from datetime import datetime
from pathlib import Path

import numpy as np  # noqa: TID253 - a test helper, not the CLI
import pandas as pd  # noqa: TID253
import yaml

MIB = 1024 * 1024
CORPUS = Path(__file__).resolve().parents[1] / "data" / "fleet" / "corpus"


def load_snapshots(root: Path, skip: tuple[str, ...] = ("broken.json",)) -> list[dict]:
    snaps = []
    for f in sorted(root.rglob("*")):
        if not f.is_file() or f.name in skip:
            continue
        data = f.read_bytes()
        name = f.name
        if name.endswith(".gz"):
            data, name = gzip.decompress(data), name[:-3]
        if name.endswith(".jsonl"):
            snaps += [json.loads(x) for x in data.decode().splitlines() if x.strip()]
        elif name.endswith(".json"):
            snaps.append(json.loads(data))
        elif name.endswith(".yaml"):
            snaps.append(yaml.safe_load(data))
    return snaps


def epoch_ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def pct(res: dict | None) -> np.float32:
    """ResourceUsage.percentUsage in float32."""
    if not res or res.get("limit", 0) <= 0:
        return np.float32(0)
    return np.float32(np.float32(res["usage"]) / np.float32(res["limit"])) * np.float32(100)


def brokers_frame(snaps: list[dict]) -> pd.DataFrame:
    rows = []
    for s in snaps:
        for bid, b in s["brokers"].items():
            cpu, bi, bo = pct(b.get("cpu")), pct(b.get("bandwidthIn")), pct(b.get("bandwidthOut"))
            rows.append({
                "cluster": s["cluster"], "captured_at": epoch_ms(s["capturedAt"]), "broker": bid,
                "cpu": float(cpu), "usage": max(float(cpu), float(bi), float(bo)) / 100,
                "rate": b["msgRateIn"] + b["msgRateOut"],
                "tput": b["msgThroughputIn"] + b["msgThroughputOut"],
                "msg_rate_in": b["msgRateIn"], "num_bundles": b["numBundles"],
            })
    return pd.DataFrame(rows)


def bundles_frame(snaps: list[dict]) -> pd.DataFrame:
    rows = []
    for s in snaps:
        for bid, b in s["brokers"].items():
            for name, st in b["lastStats"].items():
                rows.append({
                    "cluster": s["cluster"], "captured_at": epoch_ms(s["capturedAt"]),
                    "bundle": name, "broker": bid,
                    "rate": st["msgRateIn"] + st["msgRateOut"],
                    "tput": st["msgThroughputIn"] + st["msgThroughputOut"],
                    "topics": st["topics"], "sessions": st["consumerCount"] + st["producerCount"],
                    "owner_tput": b["msgThroughputIn"] + b["msgThroughputOut"],
                    "owner_bundles": len(b["lastStats"]),
                })
    return pd.DataFrame(rows)


def report(snaps: list[dict], window: int = 10, share: float = 0.5) -> dict[str, dict]:
    """Per cluster, every figure of the report's cluster table (Pulsar's default thresholds)."""
    b = brokers_frame(snaps)
    per = []
    for (cluster, t), g in b.groupby(["cluster", "captured_at"]):
        row = {"cluster": cluster, "captured_at": t, "brokers": len(g),
               "overloaded": int((g["usage"] >= 0.85).sum()), "idle": int((g["rate"] == 0).sum()),
               "usage_range": g["usage"].max() - g["usage"].min()}
        for c in ("rate", "tput"):
            x = g[c].to_numpy()
            mean, std = x.mean(), x.std(ddof=0)
            row[f"{c}_std"] = std
            row[f"{c}_cv"] = std / mean if mean > 0 else np.nan
            row[f"{c}_range"] = x.max() - x.min()
            row[f"{c}_ratio"] = x.max() / x.min() if x.min() > 0 else np.nan
        per.append(row)
    per = pd.DataFrame(per)

    u = bundles_frame(snaps).sort_values(["cluster", "bundle", "captured_at"])
    u["over_split"] = ((u["topics"] > 1000) | (u["sessions"] > 1000) | (u["rate"] > 30000)
                       | (u["tput"] > 100 * MIB))
    u["oversized"] = (u["tput"] / u["owner_tput"] > share) & (u["owner_bundles"] >= 2)
    u["unsplittable"] = (u["over_split"] | u["oversized"]) & (u["topics"] < 2)
    moves, bounces, transitions = {}, {}, {}
    for (cluster, _bundle), g in u.groupby(["cluster", "bundle"]):
        owners = list(g["broker"])
        for i in range(1, len(owners)):
            transitions[cluster] = transitions.get(cluster, 0) + 1
            if owners[i] != owners[i - 1]:
                moves[cluster] = moves.get(cluster, 0) + 1
                if owners[i] in owners[max(0, i - window):i]:
                    bounces[cluster] = bounces.get(cluster, 0) + 1
    out = {}
    for cluster, g in per.groupby("cluster"):
        ub = u[u["cluster"] == cluster]
        out[cluster] = {
            "samples": len(g), "brokers": int(g["brokers"].max()),
            "bundles": int(ub.groupby("captured_at").size().max()),
            **{f"{c}_{k}": g[f"{c}_{k}"].mean() for c in ("rate", "tput")
               for k in ("std", "cv", "range", "ratio")},
            "rate_cv_max": g["rate_cv"].max(), "tput_cv_max": g["tput_cv"].max(),
            "usage_range": g["usage_range"].mean(),
            "overloaded": int(g["overloaded"].sum()), "idle": int(g["idle"].sum()),
            "over_split": int(ub["over_split"].sum()), "oversized": int(ub["oversized"].sum()),
            "unsplittable": int(ub["unsplittable"].sum()),
            "moves": moves.get(cluster, 0), "bounces": bounces.get(cluster, 0),
            "churn": moves.get(cluster, 0) / transitions[cluster],
        }
    return out
