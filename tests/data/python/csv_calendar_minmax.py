"""csv and calendar on in-memory text, and max/min of several values (not an iterable)."""
import csv, io, calendar
rows = list(csv.reader(io.StringIO('name,score\n"Smith, J",3.5\nLee,4\n')))
print(rows)
out = io.StringIO()
w = csv.writer(out)
w.writerow(["a", "b,c", 3])
print(repr(out.getvalue()))
d = list(csv.DictReader(io.StringIO("x,y\n1,2\n3,4\n")))
print(d)
print(calendar.monthrange(2024, 2), calendar.isleap(2024), calendar.day_name[0], calendar.month_abbr[3])
print(calendar.TextCalendar(firstweekday=6).formatmonth(2024, 2))
print(max(1.0, 2.0), min(3.5, 1.5, 2.5), max(2, 1.5), max([1.0, 3.0]), max(1.0, 2.0, key=lambda v: -v))
print(max(1.0, 2.0), max(3.0, 1))
import numpy as np
print(max(np.float64(1.5), 2.0), min(np.array(3.0), 1))
try:
    sum(5)
except TypeError as e:
    print("TypeError:", e)
