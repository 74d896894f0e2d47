# Re-render the 16-core run's report on the 2-vCPU machine with the device's metadata.
import json, sys, datetime
sys.path.insert(0, '/work/main/reports/bench')
import report
from pathlib import Path
D = Path('/work/main/reports/bench/runs/2026-12-04-16core')
first = json.load(open('/tmp/dev16/r/report/results.json'))['meta']
fixed = json.load(open(D / 'results.json'))['meta']
rec = json.load(open('/tmp/dev16/r/run.json'))
rec['git'] = fixed['git']
Path('/tmp/dev16/run.json').write_text(json.dumps(rec, indent=1))
report.run_record_path = lambda: Path('/tmp/dev16/run.json')
report.machine = lambda: first['machine']
report.loadavg = lambda: first['load_after']
report.git_state = lambda: fixed['git']
report.toolchain = lambda: fixed['toolchain']
fin = datetime.datetime.strptime(first['finished'], '%Y-%m-%dT%H:%M:%SZ').replace(tzinfo=datetime.timezone.utc)
report.now_utc = lambda: fin
report.source_hashes = lambda: rec['sources']
rc = report.main(['report.py', 'after', '--keep-record', '--criterion', '/tmp/dev16/r/criterion',
                  '--wait', '/tmp/dev16/r/wait.json', '--losses', str(D / 'losses.md'), '--out', str(D)])
# the file times of the unpacked criterion dir predate the record? --keep-record keeps since
d = json.load(open(D / 'results.json')); d['meta']['criterion_dir'] = '.devbench/target/criterion on the device machine, unpacked to /tmp/dev16/r/criterion for rendering (every sample is in this file)'; d['meta']['git_as_read_on_device'] = first['git']
json.dump(d, open(D / 'results.json', 'w'), indent=1)
sys.exit(rc)
