"""NumPy structured arrays and record arrays (Data Science Handbook style)."""
import numpy as np

name = ["Alice", "Bob", "Cathy", "Doug", "Eve"]
age = [25, 45, 37, 19, 52]
weight = [55.0, 85.5, 68.0, 61.5, 70.25]

data = np.zeros(5, dtype={"names": ("name", "age", "weight"),
                          "formats": ("U10", "i4", "f8")})
print(data.dtype)
data["name"] = name
data["age"] = age
data["weight"] = weight
print(data)
print(data["name"])
print(data[0])
print(data[-1]["name"], data[data["age"] < 30]["name"])
print(data.itemsize, data.dtype.names, data.dtype.fields["age"])

order = np.sort(data, order=["age"])
print(order["name"])
print(np.argsort(data, order="weight"))

tp = np.dtype([("id", "i8"), ("mat", "f8", (2, 2))])
X = np.zeros(2, dtype=tp)
X[1]["mat"] = [[1, 2], [3, 4]]
X["id"] = [7, 9]
print(X[1])
print(X["mat"].shape, X["mat"].sum(axis=(1, 2)))

rec = data.view(np.recarray)
print(rec.age.mean(), rec.weight.max(), rec[1].name)

pts = np.array([(1.0, 2.0), (3.5, -1.0), (0.0, 0.0)], dtype=[("x", "f4"), ("y", "f4")])
print(pts, pts.dtype)
print(np.hypot(pts["x"], pts["y"]))

r = np.rec.fromarrays([np.arange(3), np.array([1.5, 2.5, 3.5]), np.array(["a", "b", "c"])],
                      names="idx,val,tag")
print(r)
print(r.val * 2, r.dtype)

compound = np.dtype("S4, i2, f4")
print(compound, compound.itemsize)
arr = np.array([(b"abcd", 3, 1.5)], dtype=compound)
print(arr["f0"], arr["f1"], arr[0])

import numpy.lib.recfunctions as rfn
unstructured = rfn.structured_to_unstructured(pts)
print(unstructured, unstructured.dtype)
added = rfn.append_fields(pts, "z", np.array([9.0, 8.0, 7.0]), usemask=False)
print(added.dtype.names, added["z"])

sales = np.array([("north", 2021, 120.0), ("south", 2021, 80.5), ("north", 2022, 150.25),
                  ("south", 2022, 99.0), ("east", 2022, 60.0)],
                 dtype=[("region", "U8"), ("year", "i2"), ("amount", "f8")])
for region in np.unique(sales["region"]):
    mask = sales["region"] == region
    print(f"{region:>6}: total={sales['amount'][mask].sum():8.2f} years={sales['year'][mask].tolist()}")
by_year = {int(y): float(sales["amount"][sales["year"] == y].mean()) for y in np.unique(sales["year"])}
print(by_year)
print(np.sort(sales, order=["year", "amount"])[::-1][["region", "amount"]])
