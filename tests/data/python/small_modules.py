# CPython's small in-memory modules: colours, keywords, topological order, HTML escapes, Unicode data,
# abbreviated reprs, diffs, base64 and hex, hashes, shell-style splitting.
import base64
import binascii
import colorsys
import difflib
import graphlib
import hashlib
import html
import keyword
import reprlib
import shlex
import unicodedata

print([round(c, 4) for c in colorsys.rgb_to_hsv(0.2, 0.4, 0.6)], colorsys.hls_to_rgb(0.5, 0.5, 0.5))
print(keyword.iskeyword("lambda"), keyword.iskeyword("tape"), len(keyword.kwlist) > 30)

layers = {"loss": {"dense2"}, "dense2": {"relu"}, "relu": {"dense1"}, "dense1": {"input"}}
print(list(graphlib.TopologicalSorter(layers).static_order()))
try:
    list(graphlib.TopologicalSorter({"a": {"b"}, "b": {"a"}}).static_order())
except graphlib.CycleError as e:
    print("CycleError", e.args[0])

print(html.escape("<b>x & y</b>"), html.unescape("&lt;&pi;&gt; &amp;"))
print(unicodedata.name("λ"), unicodedata.category("λ"), unicodedata.normalize("NFKD", "ﬁ"))
print(reprlib.repr(list(range(100))), reprlib.repr("x" * 100))

a = ["epoch 1 loss 0.5", "epoch 2 loss 0.4", "epoch 3 loss 0.3"]
b = ["epoch 1 loss 0.5", "epoch 2 loss 0.41", "epoch 3 loss 0.3", "done"]
print("\n".join(difflib.unified_diff(a, b, "before", "after", lineterm="")))
print(round(difflib.SequenceMatcher(None, "gradient", "gradients").ratio(), 4),
      difflib.get_close_matches("lern_rate", ["learning_rate", "momentum", "decay"]))

data = b"weights: [0.1, 0.2]"
print(base64.b64encode(data), base64.b64decode(base64.b64encode(data)) == data, base64.urlsafe_b64encode(b"\xff\xfe"))
print(binascii.hexlify(data[:4]), binascii.crc32(data))
print(hashlib.sha256(data).hexdigest()[:16], hashlib.md5(b"x").hexdigest(), hashlib.new("sha1", b"y").hexdigest()[:8])
h = hashlib.blake2b(digest_size=8)
h.update(b"a")
h.update(b"b")
print(h.hexdigest())
print(shlex.split("train --lr 0.1 --name 'my run'"), shlex.quote("a b"), shlex.join(["x", "y z"]))
