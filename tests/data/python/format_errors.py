try:
    "{0}".format()
except IndexError as e:
    print(e)
try:
    "{}".format_map({})
except ValueError as e:
    print(e)
