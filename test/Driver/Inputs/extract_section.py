# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""extract_section.py ARTIFACT NAME OUT: writes section NAME of a .dyncc file
(docs/ArtifactFormat.md) to OUT."""
import struct
import sys

path, wanted, out = sys.argv[1:4]
data = open(path, "rb").read()
count, table = struct.unpack_from("<I4xQ", data, 32)
for i in range(count):
    name, offset, size = struct.unpack_from("<40sQQ", data, table + 64 * i)
    if name.rstrip(b"\0").decode() == wanted:
        open(out, "wb").write(data[offset:offset + size])
        break
else:
    sys.exit(f"{path}: no section '{wanted}'")
