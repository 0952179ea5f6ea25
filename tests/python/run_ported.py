"""Runs a ported script of tests/ported/ as its own __main__ would, with one addition for the
test's eyes: the summary of each of its AverageMeters also says how many samples the meter
counted ("Acc@1 12.500 (count 87)"), the number an unchanged validate() divides by.

    python run_ported.py tests/ported/imagenet_main.py ARGS...
"""

import runpy
import sys

script = sys.argv[1]
sys.argv = sys.argv[1:]
names = runpy.run_path(script, run_name="ported")  # defines the classes; main() not yet run
meter = names["AverageMeter"]
summary = meter.summary


def summary_with_count(self):
    text = summary(self)
    return f"{text} (count {self.count:g})" if text else text


meter.summary = summary_with_count
names["main"]()
