package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of a process's CPU times in /proc/<pid>/stat: the
// kernel reports them in USER_HZ, 100 on every Linux architecture Go runs
// on.
const userHZ = 100

// cpuTime is the CPU time, user and system, a process has used so far.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu time of process %d: %w", pid, err)
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime, the 14th and 15th fields of a
// /proc/<pid>/stat line. The second field, the command in parentheses,
// may hold spaces and parentheses itself, so fields count from its last
// closing parenthesis.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("cpu time: malformed /proc stat line")
	}
	fields := strings.Fields(stat[i+1:]) // fields[0] is the 3rd field, state
	if len(fields) < 13 {
		return 0, errors.New("cpu time: short /proc stat line")
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu time: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// cpuMeter measures the CPU time the operator and the control plane
// (etcd and kube-apiserver) spend between its start and a read: what a
// workload cost the machine, beyond how long it took.
type cpuMeter struct {
	op, cp     []int
	opAt, cpAt time.Duration
}

// meterCPU starts measuring the operator op and the control plane's
// storage and API server.
func (e *env) meterCPU(op *operator) (*cpuMeter, error) {
	pids := e.cp.Pids()
	m := &cpuMeter{op: []int{op.cmd.Process.Pid}, cp: []int{pids["etcd"], pids["kube-apiserver"]}}
	var err error
	if m.opAt, err = sumCPU(m.op); err != nil {
		return nil, err
	}
	if m.cpAt, err = sumCPU(m.cp); err != nil {
		return nil, err
	}
	return m, nil
}

// figures are the CPU seconds spent since meterCPU, by the operator and by
// the control plane.
func (m *cpuMeter) figures() (result, error) {
	op, err := sumCPU(m.op)
	if err != nil {
		return nil, err
	}
	cp, err := sumCPU(m.cp)
	if err != nil {
		return nil, err
	}
	return result{durationOf("op-cpu", op-m.opAt), durationOf("cp-cpu", cp-m.cpAt)}, nil
}

func sumCPU(pids []int) (time.Duration, error) {
	var sum time.Duration
	for _, pid := range pids {
		d, err := cpuTime(pid)
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// machineCPU is the machine's CPU time by kind, from the first line of
// /proc/stat, in USER_HZ ticks summed over its CPUs.
type machineCPU struct{ total, steal int64 }

// readMachineCPU reads the machine's CPU times now.
func readMachineCPU() (machineCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}, fmt.Errorf("machine cpu time: %w", err)
	}
	return parseMachineCPU(string(b))
}

// parseMachineCPU reads the "cpu" line of /proc/stat: user, nice, system,
// idle, iowait, irq, softirq and steal make up the total (guest time is
// counted in user already). Steal is the time a hypervisor ran something
// else while this machine's CPUs had work.
func parseMachineCPU(stat string) (machineCPU, error) {
	line, _, _ := strings.Cut(stat, "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return machineCPU{}, errors.New("machine cpu time: no cpu line with steal time in /proc/stat")
	}
	var m machineCPU
	for i, f := range fields[1:9] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return machineCPU{}, fmt.Errorf("machine cpu time: %w", err)
		}
		m.total += n
		if i == 7 {
			m.steal = n
		}
	}
	return m, nil
}

// stealSince is the share of the machine's CPU time from before to m that
// the hypervisor gave to others: a turn measured while it was high ran on
// less of the machine than the others, whatever the binary did.
func (m machineCPU) stealSince(before machineCPU) figure {
	share := 0.0
	if d := m.total - before.total; d > 0 {
		share = float64(m.steal-before.steal) / float64(d)
	}
	return figure{"steal", share, percent}
}
