# zlib's checksums of an array's bytes (a fingerprint of a result), as CPython gives them.
import zlib

import numpy as np

a = np.arange(12, dtype=np.float64).reshape(3, 4)
print(zlib.crc32(a.tobytes()), zlib.adler32(b"abc"), zlib.crc32(b"x", 5))
print(hex(zlib.crc32(np.arange(3, dtype=np.int32))), f"{zlib.adler32(a.tobytes()) & 0xffffffff:08x}")
crc = 0
for row in a:
    crc = zlib.crc32(row.tobytes(), crc)
print(crc == zlib.crc32(a.tobytes()))
