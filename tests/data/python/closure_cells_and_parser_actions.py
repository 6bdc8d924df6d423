# A program function's closure cells (what its own code names) and an ArgumentParser's action list, as
# scripts read them to inspect a schedule's constants or list a parser's options.
import argparse


def make_schedule(base, decay):
    def lr(step):
        return base * decay ** step
    return lr


sched = make_schedule(0.1, 0.5)
print("closure cells:", [cell.cell_contents for cell in sched.__closure__])


class Counter:
    def bump(self):
        return super().__repr__ is not None


print("method closure:", [type(c.cell_contents).__name__ for c in Counter.bump.__closure__])
print("no closure:", make_schedule.__closure__)

parser = argparse.ArgumentParser(description="train")
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--bias", action="store_true")
print("actions:", [a.dest for a in parser._actions])
print("options:", sorted(parser._option_string_actions))
print("defaults:", {a.dest: a.default for a in parser._actions if a.dest != "help"})
