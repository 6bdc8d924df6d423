# NumPy's text and .npy/.npz readers and writers on a program's own streams and lines (a path is refused: the sandbox)
import io
import numpy as np
text = "# x y label\n1.0, 2.5, 0\n3.0, 4.5, 1\n-1.5, 0.25, 1\n"
a = np.loadtxt(io.StringIO(text), delimiter=",")
print(a, a.dtype, a.shape)
x, y = np.loadtxt(io.StringIO(text), delimiter=",", usecols=(0, 1), unpack=True)
print(x, y)
g = np.genfromtxt(io.StringIO("a,b\n1,2\n3,\n"), delimiter=",", names=True, filling_values=-1)
print(g, g.dtype.names)
lines = ["1 2", "3 4"]
print(np.loadtxt(lines, dtype=int))
buf = io.StringIO()
np.savetxt(buf, a[:, :2], fmt="%.2f", header="x y")
print(buf.getvalue())
b = io.BytesIO()
np.save(b, np.arange(6).reshape(2, 3))
b.seek(0)
print(np.load(b))
z = io.BytesIO()
np.savez(z, first=np.ones(2), second=np.zeros((1, 2)))
z.seek(0)
with np.load(z) as data:
    print(sorted(data.files), data["first"], data["second"])
