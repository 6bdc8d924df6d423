try:
    "{0}".format()
except IndexError as e:
    print(e)
try:
    "{}".format_map({})
except ValueError as e:
    print(e)

# str.format numbers an item's or attribute's field ("{[0]}", "{.real}") as the next argument, and says which way a
# mix of numbered and automatic fields went; string.Formatter keeps its own rules (a KeyError for "{[0]}")
import string

for template in ("{[0]}", "{[0]}{}", "{0}{[0]}", "{}{0}", "{0}{}", "{.real}", "{[k]}", "{0[0]}{}", "{:{}}|",
                 "{}{}{}", "{[0]!r:>5}", "{0[0]}{1}", "{}{:{}}", "{0:{}}"):
    for call in (lambda: template.format(["a"], 4, 5), lambda: template.format_map({"k": 1}),
                 lambda: str.format(template, 3j, 2, 1), lambda: string.Formatter().format(template, ["z"], 6)):
        try:
            print(repr(template), repr(call()))
        except (KeyError, IndexError, ValueError, TypeError, AttributeError) as e:
            print(repr(template), type(e).__name__, e)
