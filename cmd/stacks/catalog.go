package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import", "import [flags] FILE...",
		"Imports MARC 21 records (ISO 2709 or MARCXML, detected) into the catalogue.\n"+
			"A record matching an existing one updates the first it matches: by 001 as a\n"+
			"control number, by 035 $a as another record's 035 $a or control number, by\n"+
			"any 020 ISBN in its ISBN-10 or ISBN-13 form, else by a copy's barcode.\n"+
			"Copies come from holdings fields (Koha 952, else 852, else 949); records\n"+
			"without holdings get one copy with a generated barcode unless --no-items.\n"+
			"Malformed records are reported with their position and skipped.\n"+
			"With --stage, each file is read into a staged batch instead, matched against\n"+
			"the catalogue by the same rules but the barcode and left for review on the\n"+
			"import page; --commit ID and --undo ID commit or undo a staged batch.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	branch := fs.String("branch", "", "branch code for copies whose holdings name none (default: the library's first branch, the one stacks init set up)")
	itemType := fs.String("item-type", "BOOK", "item type code for copies whose holdings name none")
	noItems := fs.Bool("no-items", false, "do not generate copies for records without holdings fields")
	quiet := fs.Bool("quiet", false, "no progress display")
	stage := fs.Bool("stage", false, "stage each file as a batch for review; change nothing in the catalogue")
	commitBatch := fs.Int64("commit", 0, "commit the staged batch with this id")
	undoBatch := fs.Int64("undo", 0, "undo the committed batch with this id")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *commitBatch != 0 || *undoBatch != 0 {
		return runBatch(ctx, &dbf, *commitBatch, *undoBatch, stdout)
	}
	if fs.NArg() == 0 {
		return usageError{"name at least one MARC file to import"}
	}
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	branches, err := branchesOf(ctx, d, dbf.path)
	if err != nil {
		return err
	}
	if *branch == "" {
		*branch = firstBranch(branches).Code
	}
	interactive := !*quiet && isTerminal(stderr)
	for _, path := range fs.Args() {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		info, _ := f.Stat()
		counter := &countingReader{r: bufio.NewReaderSize(f, 1<<16)}
		rr, err := marc.NewAutoReader(counter)
		if err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
		start := time.Now()
		if *stage {
			id, err := catalog.StageImport(ctx, d, rr, catalog.StageOptions{Actor: stacks.Actor{Name: "import"}, FileName: path,
				Branch: *branch, ItemType: *itemType, GenerateItems: !*noItems})
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", path, userFacing(err))
			}
			var b *catalog.ImportBatch
			if err := d.Read(ctx, func(tx *db.Tx) (err error) { b, err = catalog.FindImportBatch(tx, id); return err }); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s: staged as batch %d in %s: %d records, %d new, %d matching (001: %d, 035: %d, ISBN: %d), %d errors\n",
				path, id, time.Since(start).Round(time.Millisecond), b.Records, b.New, b.MatchedTotal(),
				b.Matched[catalog.RuleControl], b.Matched[catalog.RuleSystem], b.Matched[catalog.RuleISBN], b.Errors)
			continue
		}
		opt := catalog.ImportOptions{Actor: stacks.Actor{Name: "import"}, Branch: *branch, ItemType: *itemType, GenerateItems: !*noItems}
		if interactive && info != nil && info.Size() > 0 {
			opt.Progress = func(n int) {
				pct := float64(counter.n) / float64(info.Size())
				bar := int(pct * 30)
				fmt.Fprintf(stderr, "\r%s [%-30s] %3.0f%% %d records", path, repeat('#', bar), pct*100, n)
			}
		}
		sum, err := catalog.Import(ctx, d, rr, opt)
		f.Close()
		if interactive {
			fmt.Fprintln(stderr)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, userFacing(err))
		}
		took := time.Since(start)
		rate := float64(sum.Read) / took.Seconds()
		fmt.Fprintf(stdout, "%s: read %d records in %s (%.0f a second): %d created, %d updated, %d rejected; %d copies created, %d skipped\n",
			path, sum.Read, took.Round(time.Millisecond), rate, sum.Created, sum.Updated, sum.Rejected, sum.ItemsCreated, sum.ItemsSkipped)
		for _, r := range append(sum.Rejections, sum.Notes...) {
			where := fmt.Sprintf("record %d", r.Index+1)
			if r.Offset > 0 || r.Title == "" {
				where += fmt.Sprintf(" (byte %d)", r.Offset)
			}
			if r.Title != "" {
				where += fmt.Sprintf(" %q", r.Title)
			}
			fmt.Fprintf(stdout, "  %s: %s\n", where, r.Reason)
		}
	}
	return nil
}

// runBatch commits or undoes a staged batch.
func runBatch(ctx context.Context, dbf *dbFlags, commit, undo int64, stdout io.Writer) error {
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	actor := stacks.Actor{Name: "import"}
	if commit != 0 {
		sum, err := catalog.CommitImport(ctx, d, actor, commit)
		if err != nil {
			return userFacing(err)
		}
		fmt.Fprintf(stdout, "batch %d committed: %d created, %d overlaid, %d skipped; %d copies added, %d skipped\n",
			commit, sum.Created, sum.Overlaid, sum.Skipped, sum.Copies, sum.CopiesSkipped)
		for _, r := range sum.Notes {
			fmt.Fprintf(stdout, "  record %d %q: %s\n", r.Index+1, r.Title, r.Reason)
		}
	}
	if undo != 0 {
		sum, err := catalog.UndoImport(ctx, d, actor, undo)
		if err != nil {
			return userFacing(err)
		}
		fmt.Fprintf(stdout, "batch %d undone: %d records deleted, %d restored, %d copies deleted\n", undo, sum.Deleted, sum.Restored, sum.CopiesDeleted)
	}
	return nil
}

func repeat(c byte, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

// countingReader counts the bytes read, for the progress bar.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// isTerminal reports whether w is a terminal (the progress bar is for people).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", "export [--format marcxml|iso2709] [--out FILE]",
		"Writes the whole catalogue as MARC 21, copies as Koha 952 fields. Importing the\n"+
			"export into another Stacks gives the same records and copies.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	format := fs.String("format", catalog.FormatMARCXML, "marcxml or iso2709")
	out := fs.String("out", "-", "file to write, - for standard output")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *format != catalog.FormatMARCXML && *format != catalog.FormatISO2709 {
		return usageError{fmt.Sprintf("--format %q: use marcxml or iso2709", *format)}
	}
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	w := stdout
	var f *os.File
	if *out != "-" {
		if f, err = os.Create(*out); err != nil {
			return err
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	n, err := catalog.Export(ctx, d, bw, *format)
	if err == nil {
		err = bw.Flush()
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "exported %d records\n", n)
	return nil
}
