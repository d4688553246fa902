"""Prints the temps of a manifest and, per placement of its `arena`, how
many temps are empty and ordered and whether each temp is listed once."""
import json
import sys

manifest = json.load(open(sys.argv[1]))
temps = sorted(b["id"] for b in manifest["buffers"]
               if b["kind"] in ("temp", "workspace"))
print("temps", len(temps))
arena = manifest.get("arena", [])
for i, placement in enumerate(arena):
    listed = placement["empty"] + placement["order"]
    print(f"placement {i}: {len(placement['empty'])} empty, "
          f"{len(placement['order'])} in order, each temp once: "
          f"{sorted(listed) == temps}")
print("placements", len(arena))
