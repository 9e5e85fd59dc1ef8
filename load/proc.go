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
// seconds a second): the server's process, this process (the load generator),
// everything else, and idle. On a machine shared with other work the "other"
// figure says how far the run can be trusted.
type CPUUse struct {
	Cores     int     `json:"cores"`
	Server    float64 `json:"server"`
	Generator float64 `json:"load_generator"`
	Other     float64 `json:"other"`
	Idle      float64 `json:"idle"`
}

// String is a short summary, e.g. "server 0.9, load generator 0.8, other 0.1, idle 0.2 of 2 cores".
func (c *CPUUse) String() string {
	return fmt.Sprintf("server %.1f, load generator %.1f, other %.1f, idle %.1f of %d cores", c.Server, c.Generator, c.Other, c.Idle, c.Cores)
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

type cpuSample struct {
	at                       time.Time
	busy, idle, server, self float64 // seconds
	cores                    int
}

// CPUMeter measures CPUUse between Start and Stop.
type CPUMeter struct {
	pid   int
	start cpuSample
	err   error
}

// StartCPU starts measuring; pid is the server's process (0 if unknown).
func StartCPU(pid int) *CPUMeter {
	m := &CPUMeter{pid: pid}
	m.start, m.err = readCPU(pid)
	return m
}

// Stop returns the CPU use since Start (nil if /proc could not be read).
func (m *CPUMeter) Stop() *CPUUse {
	if m == nil || m.err != nil {
		return nil
	}
	end, err := readCPU(m.pid)
	if err != nil {
		return nil
	}
	wall := end.at.Sub(m.start.at).Seconds()
	if wall <= 0 {
		return nil
	}
	u := &CPUUse{Cores: end.cores,
		Server:    (end.server - m.start.server) / wall,
		Generator: (end.self - m.start.self) / wall,
		Idle:      (end.idle - m.start.idle) / wall,
	}
	u.Other = max(0, (end.busy-m.start.busy)/wall-u.Server-u.Generator)
	return u
}

func readCPU(pid int) (cpuSample, error) {
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
	if pid > 0 {
		if s.server, err = procCPU(strconv.Itoa(pid)); err != nil {
			return s, err
		}
	}
	return s, nil
}

// procCPU reads a process's user and system CPU seconds from /proc/PID/stat.
func procCPU(pid string) (float64, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after it are plain.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%s/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// After the name: state is field 3, utime field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%s/stat: unexpected format", pid)
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / clockTicks, nil
}
