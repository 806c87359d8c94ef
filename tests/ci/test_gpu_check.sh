#!/usr/bin/env bash
# ci/gpu-check.sh's verdict, without a GPU: cmake, ctest, nvidia-smi and the
# validator are fakes on PATH (and in BUILD_DIR) that answer as the real ones
# would on a machine with one or two GPUs, and record how they were called.
# On one GPU the multi-GPU test is not run and the script passes; a skipped
# single-GPU test, a failed test, a skipped multi-GPU test on two GPUs and a
# step that no time is left for each fail it. The validator and the PyTorch
# step must be called with the budgeted arguments.
#   test_gpu_check.sh ROOT/ci/gpu-check.sh
set -euo pipefail
SCRIPT=$1
REAL_PYTHON=$(command -v python3)
WORK=$(mktemp -d /tmp/aitk-gpu-check-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
FAKE=$WORK/bin
mkdir -p "$FAKE"
failures=0

# ---- the fakes ----
cat >"$FAKE/nvidia-smi" <<'SH'
#!/usr/bin/env bash
if [ "${1:-}" = -L ]; then
    for i in $(seq 0 $((FAKE_GPUS - 1))); do echo "GPU $i: NVIDIA H200 (UUID: GPU-fake$i)"; done
else
    echo "name, driver_version"; echo "NVIDIA H200, 580.00"
fi
SH
cat >"$FAKE/cmake" <<'SH'
#!/usr/bin/env bash
echo "cmake $*" >>"$CALLS"
SH
cat >"$FAKE/pkg-config" <<'SH'
#!/usr/bin/env bash
exit 0
SH
# ctest as it prints a run of the selected labels: gpu.backend and
# gpu.step_golden (label gpu) answer FAKE_SINGLE, gpu.collectives (labels
# gpu and multigpu) skips below two GPUs, as the real one does, and answers
# FAKE_MULTI otherwise (pass | skip | fail).
cat >"$FAKE/ctest" <<'SH'
#!/usr/bin/env bash
echo "ctest $*" >>"$CALLS"
tests=""
case " $* " in
*" -LE multigpu "*) tests="gpu.backend:$FAKE_SINGLE gpu.step_golden:$FAKE_SINGLE" ;;
*" -L multigpu "*) ;;
*) tests="gpu.backend:$FAKE_SINGLE gpu.step_golden:$FAKE_SINGLE" ;;
esac
case " $* " in *" -LE multigpu "*) ;; *)
    if [ "$FAKE_GPUS" -lt 2 ]; then tests="$tests gpu.collectives:skip"
    else tests="$tests gpu.collectives:$FAKE_MULTI"; fi ;;
esac
n=0 failed=0 summary=""
for t in $tests; do
    n=$((n + 1)) name=${t%%:*} how=${t#*:}
    case $how in
    pass) echo "$n: Test #16$n: $name ....   Passed    1.00 sec" ;;
    skip) echo "$n: Test #16$n: $name ....***Skipped   0.01 sec"
          summary="$summary$(printf '\t16%s - %s (Skipped)' "$n" "$name")
" ;;
    fail) echo "$n: Test #16$n: $name ....***Failed    1.00 sec"; failed=$((failed + 1)) ;;
    esac
done
echo "$((100 * (n - failed) / n))% tests passed, $failed tests failed out of $n"
if [ -n "$summary" ]; then echo "The following tests did not run:"; printf "$summary"; fi
[ "$failed" -eq 0 ] || exit 8
SH
# python3: torch "imports"; the PyTorch step and the peak check record their
# arguments (the peak check also writes its JSON where --out says); any other
# use is the real interpreter (the figures).
cat >"$FAKE/python3" <<SH
#!/usr/bin/env bash
if [ "\${1:-}" = -c ]; then exit 0; fi
case "\${1:-}" in *torch-flux-step.py) echo "torch-flux-step \$*" >>"\$CALLS"; exit 0 ;; esac
case "\${1:-}" in *autograd-saved.py) echo "autograd-saved \$*" >>"\$CALLS"; exit 0 ;; esac
case "\${1:-}" in *torch-peak-check.py)
    echo "torch-peak-check \$*" >>"\$CALLS"
    while [ \$# -gt 0 ]; do
        if [ "\$1" = --out ]; then echo '{"rows": ["fake-peak-row"]}' >"\$2/torch-peak.json"; fi
        shift
    done
    exit 0 ;;
esac
exec "$REAL_PYTHON" "\$@"
SH
chmod +x "$FAKE"/*

# run NAME GPUS SINGLE MULTI [VAR=VALUE...]: the script with the fakes; sets
# rc, and out/log/calls to its files.
run() {
    local name=$1
    local dir=$WORK/$name
    mkdir -p "$dir/build" "$dir/out"
    # The validator records its arguments and whether op timing was asked
    # for; with it, its report has a workload measured for gemm_in_step.
    cat >"$dir/build/aitk-validate" <<'SH'
#!/usr/bin/env bash
echo "aitk-validate $* [AITK_TIME_OPS=${AITK_TIME_OPS:-unset}]" >>"$CALLS"
report='{"checks": [], "workloads": []}'
if [ "${AITK_TIME_OPS:-}" = 1 ]; then
    report='{"checks": [], "workloads": [{"name": "flux1-dev", "status": "completed",
      "gemm_in_step": {"status": "pass", "ratio": 0.91, "target": 0.85, "ms_in_step": 310,
      "problems": [{"shape": "m=4608 n=3072 k=3072", "calls": 76, "ms_in_step": 120,
                    "tflops_in_step": 650, "tflops_isolated": 700, "ratio": 0.93}]}}]}'
fi
case " $* " in *no-checkpointing.yaml*)
    report='{"checks": [], "workloads": [{"name": "flux1-dev", "backend": "cuda",
      "status": "completed", "step_time_s": {"median": 0.61}, "throughput": {"mfu": 0.47},
      "configuration": {"gradient_checkpointing": false}}]}' ;;
esac
while [ $# -gt 0 ]; do
    if [ "$1" = --json ]; then echo "$report" >"$2"; fi
    shift
done
SH
    chmod +x "$dir/build/aitk-validate"
    out=$dir/stdout log=$dir/out/gpu-check.log calls=$dir/calls
    : >"$calls"
    rc=0
    env PATH="$FAKE:$PATH" CALLS="$calls" FAKE_GPUS="$2" FAKE_SINGLE="$3" FAKE_MULTI="$4" \
        OUT="$dir/out" BUILD_DIR="$dir/build" "${@:5}" bash "$SCRIPT" >"$out" 2>&1 || rc=$?
}

expect() { # expect WHAT CONDITION...
    local what=$1
    shift
    if ! "$@"; then
        echo "FAIL: $what"
        echo "--- stdout:"; cat "$out"; echo "--- calls:"; cat "$calls"
        failures=$((failures + 1))
    else
        echo "ok: $what"
    fi
}
has() { grep -q -- "$2" "$1"; }
lacks() { ! grep -q -- "$2" "$1"; }

# One GPU, every single-GPU test passes: the multi-GPU test is not run, and
# that is not a failure.
run one_gpu 1 pass pass
expect "one GPU, tests pass: exit 0 (got $rc)" test "$rc" -eq 0
expect "one GPU: the multi-GPU label is left out" has "$calls" "ctest .*-L gpu -LE multigpu"
expect "one GPU: no multi-GPU run" lacks "$calls" "ctest .*-L multigpu --output"
expect "one GPU: the log says why" has "$log" "not run, 1 GPU here, they need 2"
expect "validate: --full --steps 20" has "$calls" "aitk-validate --full --steps 20 --json"
expect "mfu: the bf16 FLUX config" has "$calls" "aitk-validate --standard --steps 20 --config .*/ci/flux-bf16-mfu.yaml"
expect "mfu: without op timing (its MFU must not carry the events)" \
    has "$calls" "aitk-validate --standard --steps 20 .*\[AITK_TIME_OPS=unset\]"
expect "gemm-in-step: the same job with AITK_TIME_OPS=1" \
    has "$calls" "aitk-validate --standard --steps 4 --config .*/ci/flux-bf16-mfu.yaml --json .*/gemm-in-step.json .*\[AITK_TIME_OPS=1\]"
expect "validate: without op timing" has "$calls" "aitk-validate --full .*\[AITK_TIME_OPS=unset\]"
expect "figures: the GEMM-in-step ratio" \
    has "$WORK/one_gpu/out/figures.txt" "gemm_in_step: pass ratio 0.91 (target 0.85)"
expect "figures: the GEMM-in-step problems" \
    has "$WORK/one_gpu/out/figures.txt" "m=4608 n=3072 k=3072: x76 120 ms, 650 TFLOP/s in the step, 700 alone, ratio 0.93"
expect "torch: every resolution and the generation pass, aitk's report" \
    has "$calls" "torch-flux-step.py --out [^ ]* --aitk .* --report .*/mfu.json"
expect "torch: no resolution or generation pass left out, the masks apart" \
    has "$calls" "torch-flux-step.py --out [^ ]*/out --aitk [^ ]* --masked-resolution 0 "
expect "torch: the main step keeps its resolutions and generation pass" \
    lacks "$calls" "torch-flux-step.py --out [^ ]*/out .*\(--resolutions\|--no-generation\)"
expect "torch-mask: both masks and the Windows kernel at 1024 px beside predict, last, its JSON in BUILD_DIR" \
    has "$calls" "torch-flux-step.py --out .*/build/torch-mask --resolutions  --no-generation --masked-resolution 1024 --efficient-resolution 1024 --dense-mask-resolution 1024 --aitk .*/build/aitk-validate$"
expect "no-ckpt: aitk's step on the job without checkpointing, its report in BUILD_DIR" \
    has "$calls" "aitk-validate --standard --steps 20 --config .*/ci/flux-bf16-mfu-no-checkpointing.yaml --json .*/build/mfu-no-ckpt.json .*\[AITK_TIME_OPS=unset\]"
expect "no-ckpt: PyTorch eager's step without checkpointing at 1024 px, beside aitk's" \
    has "$calls" "torch-flux-step.py --out .*/build/torch-no-ckpt --resolutions 1024 --no-generation --masked-resolution 0 --no-checkpointing --aitk .* --report .*/build/mfu-no-ckpt.json$"
expect "no-ckpt: its figures in the log" \
    has "$log" "^no-ckpt workload flux1-dev on cuda: completed; median 0.61 s/step; .*MFU 0.47;.*checkpointing False$"
expect "memory: what autograd saves, on CUDA, with no peft needed" \
    has "$calls" "autograd-saved.py --device cuda --lora plain"
expect "memory: again with diffusers' targets, whose modulation takes no gradient" \
    has "$calls" "autograd-saved.py --device cuda --lora plain --targets diffusers$"
expect "memory: the peak check with the validator, its JSON in BUILD_DIR" \
    has "$calls" "torch-peak-check.py --aitk .*/build/aitk-validate --out .*/build$"
expect "memory: the peak check's JSON is in the log" has "$log" "fake-peak-row"
expect "memory: nothing more comes back from OUT (8 files at most)" \
    test ! -e "$WORK/one_gpu/out/torch-peak.json"
expect "cudnn-diag: the backend test again, verbose" has "$calls" 'ctest .*-R ^gpu\\.backend\$ -V'
expect "cudnn-diag: said in the log, per cuDNN" has "$log" "cuDNN diagnosis 1 (libraries: loader)"
expect "verdict pass in the log" has "$log" "^verdict: pass"

# A single-GPU test skipped: no GPU answered it, a failure.
run skipped 1 skip pass
expect "a skipped single-GPU test: exit 1 (got $rc)" test "$rc" -eq 1
expect "the skipped test is named" has "$log" "GPU tests skipped (no GPU answered them): gpu.backend"

# A test failed.
run failed 1 fail pass
expect "a failed test: exit 1 (got $rc)" test "$rc" -eq 1
expect "verdict fail in the log" has "$log" "^verdict: fail"
expect "the cuDNN diagnosis runs all the same" has "$log" "cuDNN diagnosis 1"

# Two GPUs: the multi-GPU test runs, and its skip is a failure.
run two_gpus 2 pass pass
expect "two GPUs, tests pass: exit 0 (got $rc)" test "$rc" -eq 0
expect "two GPUs: the multi-GPU run" has "$calls" "ctest .*-L multigpu --output"
run two_gpus_skip 2 pass skip
expect "two GPUs, multi-GPU test skipped: exit 1 (got $rc)" test "$rc" -eq 1
expect "the skipped multi-GPU test is named" has "$log" "multi-GPU tests skipped with 2 GPUs: gpu.collectives"

# No time left: steps are not started, and that fails.
run no_time 1 pass pass TOTAL_LIMIT_S=5
expect "no time left: exit 1 (got $rc)" test "$rc" -eq 1
expect "no time left: said" has "$log" "not started"

# A rerun of one step: the build and tests are left alone.
run only_torch 1 pass pass ONLY=torch
expect "ONLY=torch: exit 0 (got $rc)" test "$rc" -eq 0
expect "ONLY=torch: no build, no ctest" lacks "$calls" "^c"
expect "ONLY=torch: the PyTorch step ran" has "$calls" "torch-flux-step.py"
expect "ONLY=torch: no peak check" lacks "$calls" "torch-peak-check"
expect "ONLY=torch: no mask runs" lacks "$calls" "dense-mask-resolution"
expect "ONLY=torch: no run without checkpointing" lacks "$calls" "no-checkpointing"

if [ "$failures" -ne 0 ]; then
    echo "$failures expectation(s) failed"
    exit 1
fi
