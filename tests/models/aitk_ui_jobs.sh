#!/bin/sh
# Writes the job files ai-toolkit's web UI gives run.py for a new FLUX.1,
# Chroma and OmniGen2 job left at its defaults, from the UI's own code at
# one commit of a local git mirror of ai-toolkit: the default job
# (ui/src/app/jobs/new/jobConfig.ts, its samples from
# ui/src/helpers/defaultSamples.ts) evaluated by node with the type
# annotations cut out, then each model's defaults applied as the UI's
# handleModelArchChange (ui/src/app/jobs/new/utils.ts) applies them when
# the model is picked (the default job's Flex.1 values put back, the new
# model's set; options.tsx), and the database path set as
# ui/cron/actions/startJob.ts sets it before writing .job_config.json with
# JSON.stringify(config, null, 2). Only what handleModelArchChange does to a
# fresh single-dataset image job is done here (no control images, one frame).
#   tests/models/aitk_ui_jobs.sh GIT_DIR OUT_DIR [COMMIT]
# GIT_DIR: a clone or bare mirror of github.com/ostris/ai-toolkit; OUT_DIR
# gets ui_generated_<arch>.json; COMMIT: default HEAD. Needs node.
set -eu
git_dir=${1:?usage: $0 GIT_DIR OUT_DIR [COMMIT]}
out=${2:?usage: $0 GIT_DIR OUT_DIR [COMMIT]}
commit=${3:-HEAD}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in app/jobs/new/jobConfig.ts helpers/defaultSamples.ts app/jobs/new/options.tsx; do
    git --git-dir="$git_dir" show "$commit:ui/src/$f" >"$tmp/$(basename "$f")"
done
cat >"$tmp/make.js" <<'JS'
const fs = require('fs'), vm = require('vm'), path = require('path');
const dir = process.argv[2], arch = process.argv[3];
const read = f => fs.readFileSync(path.join(dir, f), 'utf8');
// Type annotations of the two data files: "export const x: Type =" and imports.
const strip = t => t.replace(/^import .*$/mg, '')
    .replace(/export const (\w+)\s*:\s*[\w<>\[\]]+\s*=/g, 'var $1 =')
    .replace(/export const /g, 'var ');
let job = read('jobConfig.ts');
job = job.slice(0, job.indexOf('export const migrateJobConfig'));
const ctx = {isMac: () => false};
vm.createContext(ctx);
vm.runInContext(strip(read('defaultSamples.ts')) + '\n' + strip(job), ctx);
const config = JSON.parse(JSON.stringify(ctx.defaultJobConfig));
// One model's `defaults: {'config.process[0]...': [selected, unselected]}`.
const options = read('options.tsx');
const named = options.match(/const defaultNameOrPath = '([^']*)'/)[1];
const defaultsOf = name => {
    const at = options.indexOf(`name: '${name}',`);
    if (at < 0) throw new Error(`options.tsx has no model '${name}'`);
    const open = options.indexOf('defaults: {', at) + 'defaults: '.length;
    let depth = 0, end = open;
    for (; end < options.length; end++) {
        if (options[end] === '{') depth++;
        if (options[end] === '}' && --depth === 0) break;
    }
    const body = options.slice(open, end + 1).replace(/\/\/.*$/mg, '');
    return vm.runInNewContext('(' + body + ')', {defaultNameOrPath: named});
};
const p = config.config.process[0];
const set = (key, value) => {
    const parts = key.replace(/^config\.process\[0\]\./, '').split('.');
    let o = p;
    for (const k of parts.slice(0, -1)) o = o[k];
    o[parts[parts.length - 1]] = value;
};
p.model.low_vram = false; // not a section of these models
for (const [k, v] of Object.entries(defaultsOf(p.model.arch))) set(k, v[1]);
p.model.arch = arch;
for (const [k, v] of Object.entries(defaultsOf(arch))) set(k, v[0]);
p.datasets.forEach(d => { d.controls = []; d.num_frames = 1; });
p.sample.samples.forEach(s => { delete s.ctrl_img; });
p.sqlite_db_path = '/opt/ai-toolkit/aitk_db.db';
process.stdout.write(JSON.stringify(config, null, 2));
JS
mkdir -p "$out"
for arch in flux chroma omnigen2; do
    node "$tmp/make.js" "$tmp" "$arch" >"$out/ui_generated_$arch.json"
    echo "$out/ui_generated_$arch.json"
done
