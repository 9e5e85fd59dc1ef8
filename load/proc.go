package load

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ReadMemory reads a process's peak and current resident memory (VmHWM, VmRSS)
// from /proc (Linux).
func ReadMemory(pid int) (*Memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, fmt.Errorf("read the server's memory: %w", err)
	}
	defer f.Close()
	m := &Memory{PID: pid}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmHWM":
			m.PeakKB = kb
		case "VmRSS":
			m.RSSKB = kb
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if m.PeakKB == 0 {
		return nil, fmt.Errorf("/proc/%d/status has no VmHWM", pid)
	}
	return m, nil
}

// ResetPeakMemory resets a process's VmHWM to its current resident memory (Linux
// clear_refs 5; allowed for one's own processes), so that the peak read after a
// run is that run's.
func ResetPeakMemory(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// CPUUse is where the machine's CPU time went during a run, in cores (CPU
// seconds a second): the servers' processes, the database server's (PostgreSQL's
// postmaster and its backends, when known), this process (the load generator),
// everything else, and idle. On a machine shared with other work the "other"
// figure says how far the run can be trusted.
type CPUUse struct {
	Cores     int     `json:"cores"`
	Server    float64 `json:"server"`
	Database  float64 `json:"database,omitempty"`
	Generator float64 `json:"load_generator"`
	Other     float64 `json:"other"`
	Idle      float64 `json:"idle"`
}

// String is a short summary, e.g. "server 0.9, load generator 0.8, other 0.1, idle 0.2 of 2 cores".
func (c *CPUUse) String() string {
	db := ""
	if c.Database > 0 {
		db = fmt.Sprintf(", PostgreSQL %.1f", c.Database)
	}
	return fmt.Sprintf("server %.1f%s, load generator %.1f, other %.1f, idle %.1f of %d cores", c.Server, db, c.Generator, c.Other, c.Idle, c.Cores)
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

type cpuSample struct {
	at                                 time.Time
	busy, idle, server, database, self float64 // seconds
	cores                              int
}

// Procs are the processes a CPUMeter tells apart from the rest of the machine.
type Procs struct {
	// Servers are the Stacks servers under test.
	Servers []int
	// Database is PostgreSQL's postmaster (0: none, or not on this machine): its
	// CPU and that of its children, the backends serving the connections.
	Database int
}

// CPUMeter measures CPUUse between Start and Stop.
type CPUMeter struct {
	procs Procs
	start cpuSample
	err   error
}

// StartCPU starts measuring; pid is the server's process (0 if unknown).
func StartCPU(pid int) *CPUMeter {
	var p Procs
	if pid > 0 {
		p.Servers = []int{pid}
	}
	return StartCPUProcs(p)
}

// StartCPUProcs starts measuring, telling the servers and the database apart.
func StartCPUProcs(p Procs) *CPUMeter {
	m := &CPUMeter{procs: p}
	m.start, m.err = readCPU(p)
	return m
}

// Stop returns the CPU use since Start (nil if /proc could not be read).
func (m *CPUMeter) Stop() *CPUUse {
	if m == nil || m.err != nil {
		return nil
	}
	end, err := readCPU(m.procs)
	if err != nil {
		return nil
	}
	wall := end.at.Sub(m.start.at).Seconds()
	if wall <= 0 {
		return nil
	}
	u := &CPUUse{Cores: end.cores,
		Server:    (end.server - m.start.server) / wall,
		Database:  max(0, (end.database-m.start.database)/wall),
		Generator: (end.self - m.start.self) / wall,
		Idle:      (end.idle - m.start.idle) / wall,
	}
	u.Other = max(0, (end.busy-m.start.busy)/wall-u.Server-u.Database-u.Generator)
	return u
}

func readCPU(p Procs) (cpuSample, error) {
	s := cpuSample{at: time.Now()}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 8 && f[0] == "cpu":
			// user nice system idle iowait irq softirq steal
			var v [8]float64
			for i := range v {
				v[i], _ = strconv.ParseFloat(f[i+1], 64)
			}
			s.busy = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / clockTicks
			s.idle = (v[3] + v[4]) / clockTicks
		case len(f) > 0 && strings.HasPrefix(f[0], "cpu"):
			s.cores++
		}
	}
	if s.self, err = procCPU("self"); err != nil {
		return s, err
	}
	for _, pid := range p.Servers {
		c, err := procCPU(strconv.Itoa(pid))
		if err != nil {
			return s, err
		}
		s.server += c
	}
	if p.Database > 0 {
		s.database = treeCPU(p.Database)
	}
	return s, nil
}

// treeCPU is the CPU seconds of a process, of its children that have exited
// (cutime, cstime) and of its living children: PostgreSQL's postmaster and its
// backends. A backend that exits during a run takes the time it had before the
// run with it into cutime, a small overcount; the pools keep their connections,
// so few do.
func treeCPU(parent int) float64 {
	fields, err := statFields(strconv.Itoa(parent))
	if err != nil {
		return 0
	}
	total := ticks(fields, 11) + ticks(fields, 12) + ticks(fields, 13) + ticks(fields, 14)
	dirs, _ := os.ReadDir("/proc")
	want := strconv.Itoa(parent)
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		f, err := statFields(d.Name())
		if err != nil || len(f) < 13 || f[1] != want {
			continue
		}
		total += ticks(f, 11) + ticks(f, 12)
	}
	return total
}

func ticks(f []string, i int) float64 {
	if i >= len(f) {
		return 0
	}
	v, _ := strconv.ParseFloat(f[i], 64)
	return v / clockTicks
}

// statFields returns the fields of /proc/PID/stat after the command name:
// [0] is the state, [1] the parent's pid, [11] and [12] utime and stime, [13]
// and [14] the waited-for children's.
func statFields(pid string) ([]string, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil, err
	}
	// The command name (field 2) may hold spaces; the fields after it are plain.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%s/stat: unexpected format", pid)
	}
	return strings.Fields(string(b[i+1:])), nil
}

// procCPU reads a process's user and system CPU seconds from /proc/PID/stat.
func procCPU(pid string) (float64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	// After the name: state is field 3, utime field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%s/stat: unexpected format", pid)
	}
	return ticks(f, 11) + ticks(f, 12), nil
}
