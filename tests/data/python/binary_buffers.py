"""Binary data: struct packing, array module, memoryview, bytes/int conversions, bit tricks."""
import struct
from array import array
import binascii

header_fmt = "<4sHHIf"
print(struct.calcsize(header_fmt), struct.calcsize("@4sHHIf"), struct.calcsize(">bhiq"))
packed = struct.pack(header_fmt, b"NPY1", 3, 2, 1024, 0.1)
print(packed, len(packed))
magic, major, minor, size, scale = struct.unpack(header_fmt, packed)
print(magic, major, minor, size, scale, round(scale, 6))
print(struct.pack(">I", 0xDEADBEEF).hex(), struct.pack("<I", 0xDEADBEEF).hex(" "))
print(struct.pack("!h", -2), struct.unpack(">h", b"\xff\xfe"), struct.unpack("<H", b"\xff\xfe"))
print(struct.pack("?xb3s", True, -1, b"ab"))

Record = struct.Struct("<i d 8s")
rows = [(1, 3.14, b"alpha"), (2, -0.5, b"beta"), (3, 1e10, b"gamma!!!")]
buf = bytearray(Record.size * len(rows))
for i, row in enumerate(rows):
    Record.pack_into(buf, i * Record.size, *row)
print(Record.size, Record.format, len(buf))
for rec in Record.iter_unpack(bytes(buf)):
    print("  ", rec[0], rec[1], rec[2].rstrip(b"\x00").decode())
print(Record.unpack_from(buf, Record.size)[1])

for f in (1.0, -2.5, 0.1, float("inf")):
    bits = struct.unpack(">Q", struct.pack(">d", f))[0]
    print(f"{f!r:>6} -> {bits:064b}"[:30], hex(bits), f.hex())
half = struct.pack("<e", 0.1)
print(half.hex(), struct.unpack("<e", half)[0])

a = array("i", [1, 2, 3, 4])
a.append(5)
a.extend([6, 7])
print(a, a.itemsize, a.typecode, a.tolist()[::2], a.buffer_info()[1])
b = array("d", (x / 4 for x in range(5)))
print(b, sum(b), b[1:3], array("b", b"\x01\xff"))
a.byteswap()
print(a[:2].tobytes().hex())
a.byteswap()
print(a.index(4), a.count(7), array("u", "héllo").tounicode())

mv = memoryview(bytearray(b"abcdefgh"))
print(mv[2:5].tobytes(), mv.nbytes, mv.readonly, mv.format, mv[0])
mv[0:3] = b"XYZ"
print(mv.obj, mv.cast("H").tolist()[:2], mv.cast("B", shape=[2, 4]).tolist())
nums = memoryview(array("h", [1, -1, 256]))
print(nums.format, nums.itemsize, nums.tolist(), bytes(nums))

n = 2024
print(n.to_bytes(2, "big"), n.to_bytes(4, "little"), int.from_bytes(b"\x07\xe8", "big"))
print((-5).to_bytes(2, "big", signed=True), int.from_bytes(b"\xff\xfb", "big", signed=True))
print(bin(n), oct(n), hex(n), int("7e8", 16), int("0b1010", 0), int("z", 36), n.bit_length(), n.bit_count())
print(format(n, "016b"), f"{n:#06x}", bytes.fromhex("de ad be ef"), b"\x00\x10".hex())
print(binascii.crc32(b"hello world"), binascii.hexlify(b"hi", "-"), bytes(range(65, 70)))
mask = 0b1011_0110
print(mask & 0x0F, mask | 1, mask ^ 0xFF, mask >> 2, mask << 3, ~mask, mask & -mask)
bits = [i for i in range(8) if mask >> i & 1]
print(bits, sum(1 << i for i in bits) == mask)
print(b"abc" + bytes([100]), bytearray(b"hello").upper(), b"a,b,,c".split(b","), b"xyz"[1], b"%d-%s" % (5, b"q"))
