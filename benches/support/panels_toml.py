"""Write a preset's panels as a warroom config's [[panel]] tables, 5 s refresh, 1 h range.

Usage: python3 benches/support/panels_toml.py PRESET.toml OUT.toml
(benches/peers.sh and benches/startup-order.sh: a console with these panels set, not discovered).
"""
import json
import sys
import tomllib

with open(sys.argv[1], "rb") as f:
    panels = tomllib.load(f)["panel"]
out = ['refresh = "5s"', 'range = "1h"', ""]
for p in panels:
    out.append("[[panel]]")
    for k in ("title", "query", "unit", "warn", "crit", "legend", "signal", "bad_when"):
        if k in p:
            out.append(f"{k} = {json.dumps(p[k])}")
    out.append("")
open(sys.argv[2], "w").write("\n".join(out))
