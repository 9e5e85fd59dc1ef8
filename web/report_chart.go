package web

import (
	"strconv"
	"unicode/utf8"

	"github.com/stacks-ils/stacks/reports"
)

// chartBar is one bar of a server-drawn SVG chart, placed in SVG units.
type chartBar struct {
	Label, Value string
	// Y is the top of the row; W the bar's width.
	Y, W int
	// Title is the full label and value, for the bar's tooltip and screen readers.
	Title string
}

// Chart is a horizontal bar chart laid out for SVG: labels on the left, bars
// scaled to the largest value, the value after each bar. Horizontal bars keep long
// labels (titles, months) readable and need no rotated text.
type Chart struct {
	Title        string
	Width        int
	Height       int
	LabelW, BarH int
	Bars         []chartBar
}

const (
	chartWidth   = 760
	chartLabelW  = 260
	chartRowH    = 24
	chartBarH    = 16
	chartMaxBar  = chartWidth - chartLabelW - 70
	chartMaxBars = 40
)

// newChart lays out bars (at most chartMaxBars: a chart of more is a table).
func newChart(title string, bars []reports.Bar) *Chart {
	if len(bars) == 0 || len(bars) > chartMaxBars {
		return nil
	}
	top := 0
	for _, b := range bars {
		top = max(top, b.Value)
	}
	c := &Chart{Title: title, Width: chartWidth, Height: len(bars)*chartRowH + 8, LabelW: chartLabelW, BarH: chartBarH}
	for i, b := range bars {
		w := 0
		if top > 0 {
			w = b.Value * chartMaxBar / top
		}
		if b.Value > 0 && w < 1 {
			w = 1
		}
		v := strconv.Itoa(b.Value)
		c.Bars = append(c.Bars, chartBar{Label: clip(b.Label, 36), Value: v, Y: 4 + i*chartRowH, W: w, Title: b.Label + ": " + v})
	}
	return c
}

// clip shortens s to n characters with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func svgInt(n int) string { return strconv.Itoa(n) }

// viewBox is the chart's SVG viewBox.
func (c *Chart) viewBox() string { return "0 0 " + svgInt(c.Width) + " " + svgInt(c.Height) }
