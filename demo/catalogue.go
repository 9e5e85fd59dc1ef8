package demo

import (
	"fmt"
	"strings"
	"time"
)

// record is a title; its copies are items.
type record struct {
	id         int64
	title      string
	author     string
	isbn       string
	publisher  string
	year       int
	subjects   []string
	callNumber string
	typ        int64 // the item type of its copies
	created    time.Time
	items      []*item
	fixture    bool
	held       bool // chosen for holds: its copies are all out
}

// item is a copy.
type item struct {
	id      int64
	barcode string
	rec     *record
	branch  int64 // home and current branch: the demo has nothing in transit
	typ     int64
	status  string
	price   int
	created time.Time
	updated time.Time
	// reserved items belong to a fixture patron's history and get nothing else.
	reserved bool
	// busyFrom is the day the item's current loan, or the loan before its trapping
	// for a hold, was issued: older history must end before it. Zero: today.
	busyFrom time.Time
}

func (it *item) loanable() bool {
	return it.typ != typeRef && !it.reserved && !it.rec.fixture
}

// fixtureTitles are the desk scenario's items I00001 to I00010, one copy each, all
// at Central. Only I00010 is by Le Guin, and no other title is near "left hand of
// darkness", so the scenario's search has one clear answer.
var fixtureTitles = []struct {
	title, author, isbn, publisher string
	year                           int
	subjects                       []string
	callNumber                     string
}{
	{"Pride and Prejudice", "Austen, Jane", "", "T. Egerton", 1813,
		[]string{"Courtship -- Fiction", "Social classes -- England -- Fiction", "Love stories"}, "FIC AUS"},
	{"Kindred", "Butler, Octavia E.", "", "Doubleday", 1979,
		[]string{"Time travel -- Fiction", "Slavery -- Fiction", "Science fiction"}, "SF BUT"},
	{"Nineteen Eighty-Four", "Orwell, George", "", "Secker & Warburg", 1949,
		[]string{"Totalitarianism -- Fiction", "Dystopias", "Political fiction"}, "FIC ORW"},
	{"Things Fall Apart", "Achebe, Chinua", "", "Heinemann", 1958,
		[]string{"Igbo (African people) -- Fiction", "Nigeria -- History -- Fiction"}, "FIC ACH"},
	{"The Hobbit", "Tolkien, J. R. R.", "", "George Allen & Unwin", 1937,
		[]string{"Middle Earth (Imaginary place) -- Fiction", "Fantasy fiction"}, "FIC TOL"},
	{"Frankenstein", "Shelley, Mary Wollstonecraft", "", "Lackington, Hughes, Harding, Mavor & Jones", 1818,
		[]string{"Frankenstein's monster (Fictitious character) -- Fiction", "Scientists -- Fiction", "Horror fiction"}, "SF SHE"},
	{"Middlemarch", "Eliot, George", "", "William Blackwood and Sons", 1871,
		[]string{"City and town life -- England -- Fiction", "Domestic fiction"}, "FIC ELI"},
	{"Beloved", "Morrison, Toni", "", "Alfred A. Knopf", 1987,
		[]string{"Women slaves -- Fiction", "Mothers and daughters -- Fiction", "Psychological fiction"}, "FIC MOR"},
	{"Dune", "Herbert, Frank", "", "Chilton Books", 1965,
		[]string{"Dune (Imaginary place) -- Fiction", "Science fiction"}, "SF HER"},
	{"The Left Hand of Darkness", "Le Guin, Ursula K.", "9780441478125", "Ace Books", 1969,
		[]string{"Gender identity -- Fiction", "Life on other planets -- Fiction", "Science fiction"}, "SF LEG"},
}

// fixtureCatalogue adds I00001 to I00010.
func (l *library) fixtureCatalogue() {
	created := l.today.AddDate(-3, 0, 0).Add(10 * time.Hour)
	for i, f := range fixtureTitles {
		r := &record{
			id: int64(len(l.records) + 1), title: f.title, author: f.author, isbn: f.isbn,
			publisher: f.publisher, year: f.year, subjects: f.subjects, callNumber: f.callNumber,
			typ: typeBook, created: created, fixture: true,
		}
		l.records = append(l.records, r)
		l.addItem(r, fmt.Sprintf("I%05d", i+1), branchCEN, 1899, created)
	}
}

func (l *library) addItem(r *record, barcode string, branch int64, price int, created time.Time) {
	it := &item{
		id: int64(len(l.items) + 1), barcode: barcode, rec: r, branch: branch, typ: r.typ,
		status: "available", price: price, created: created, updated: created,
	}
	r.items = append(r.items, it)
	l.items = append(l.items, it)
}

// generatedCatalogue adds opt.Titles titles: about 82% books for adults (fiction,
// non-fiction, biography), 8% children's books, 7% DVDs and 3% reference works, with
// one to five copies each (three on average) spread over the branches.
func (l *library) generatedCatalogue() {
	seen := map[string]bool{}
	for _, f := range fixtureTitles {
		seen[f.title] = true
	}
	isbnNext := make([]int, len(publishers)+len(childrenPublishers)+len(referencePublishers))
	barcode := 0
	for n := 0; n < l.opt.Titles; n++ {
		r := &record{id: int64(len(l.records) + 1), typ: typeBook}
		// A few attempts at a title not yet used; a very large catalogue may repeat
		// some, as real ones do.
		for try := 0; try < 8; try++ {
			l.describe(r)
			if !seen[r.title] {
				break
			}
		}
		seen[r.title] = true
		if r.typ != typeDVD {
			pub := l.publisherIndex(r.publisher)
			isbnNext[pub] += 1 + l.rng.IntN(7)
			r.isbn = isbn13(fmt.Sprintf("9781%03d%05d", 100+pub*31, isbnNext[pub]%100000))
		}
		r.created = l.today.AddDate(0, 0, -(120 + l.rng.IntN(2000))).Add(time.Duration(9*3600+l.rng.IntN(8*3600)) * time.Second)
		l.records = append(l.records, r)

		copies := []int{1, 2, 2, 3, 3, 3, 3, 4, 4, 5}[l.rng.IntN(10)]
		if r.typ == typeDVD || r.typ == typeRef {
			copies = 1 + l.rng.IntN(3)
		}
		for c := 0; c < copies; c++ {
			branch := []int64{branchCEN, branchCEN, branchCEN, branchCEN, branchEAS, branchEAS, branchEAS, branchWES, branchWES, branchWES}[l.rng.IntN(10)]
			if c == 0 && r.typ == typeRef {
				branch = branchCEN // the reference collection lives at Central
			}
			barcode++
			l.addItem(r, itemBarcode(barcode), branch, l.price(r.typ), r.created.Add(time.Duration(c)*time.Hour))
		}
	}
}

// describe fills in a record's descriptive fields.
func (l *library) describe(r *record) {
	rng := l.rng
	switch k := rng.IntN(100); {
	case k < 44: // adult fiction
		r.typ = typeBook
		r.title = l.fictionTitle()
		r.author = l.personName()
		r.publisher = pick(rng, publishers)
		r.year = l.year(1950)
		r.subjects = []string{pick(rng, fictionGenres)}
		if rng.IntN(3) > 0 {
			r.subjects = append(r.subjects, pick(rng, fictionTopics)+" -- Fiction")
		}
		prefix := "FIC"
		if r.subjects[0] == "Science fiction" || r.subjects[0] == "Fantasy fiction" {
			prefix = "SF"
		}
		r.callNumber = prefix + " " + cutter(r.author)
	case k < 52: // children's fiction
		r.typ = typeBook
		noun := pick(rng, juvenileNouns)
		r.title = fmt.Sprintf(pick(rng, juvenileTemplates), noun, pick(rng, forenames), pick(rng, juvenileVerbs), pick(rng, juvenileAdjectives))
		r.author = l.personName()
		r.publisher = pick(rng, childrenPublishers)
		r.year = l.year(1980)
		r.subjects = []string{pick(rng, juvenileTopics) + " -- Juvenile fiction"}
		r.callNumber = "J FIC " + cutter(r.author)
	case k < 82: // non-fiction
		r.typ = typeBook
		t := pick(rng, topics)
		r.title = capitalize(fmt.Sprintf(pick(rng, nonfictionTemplates), pick(rng, t.phrases)))
		r.author = l.personName()
		r.publisher = pick(rng, publishers)
		r.year = l.year(1960)
		r.subjects = []string{t.subject}
		if rng.IntN(2) == 0 {
			r.subjects = append(r.subjects, t.subject+" -- Popular works")
		}
		r.callNumber = t.dewey + " " + cutter(r.author)
	case k < 90: // biography
		r.typ = typeBook
		subjectSurname, subjectForename := pick(rng, surnames), pick(rng, forenames)
		r.title = fmt.Sprintf(pick(rng, biographyTemplates), subjectForename+" "+subjectSurname)
		r.author = l.personName()
		r.publisher = pick(rng, publishers)
		r.year = l.year(1960)
		r.subjects = []string{subjectSurname + ", " + subjectForename, "Biographies"}
		r.callNumber = "B " + cutter(subjectSurname)
	case k < 97: // DVD
		r.typ = typeDVD
		r.title = l.fictionTitle()
		r.author = l.personName() // the director
		r.publisher = pick(rng, studios)
		r.year = l.year(1975)
		r.subjects = []string{pick(rng, filmGenres)}
		r.callNumber = "DVD " + cutter(withoutArticle(r.title))
	default: // reference
		r.typ = typeRef
		t := pick(rng, topics)
		phrase := strings.TrimPrefix(pick(rng, t.phrases), "the ")
		r.title = fmt.Sprintf(pick(rng, referenceTemplates), phrase)
		r.author = l.personName() // the editor
		r.publisher = pick(rng, referencePublishers)
		r.year = l.year(1990)
		r.subjects = []string{t.subject + " -- Dictionaries", t.subject + " -- Encyclopedias"}
		r.callNumber = "REF " + t.dewey + " " + cutter(r.author)
	}
}

func (l *library) fictionTitle() string {
	rng := l.rng
	return fmt.Sprintf(pick(rng, fictionTemplates),
		pick(rng, titleAdjectives), pick(rng, titleNouns), pick(rng, titlePlurals),
		pick(rng, titlePlaces), pick(rng, titleNouns))
}

// personName returns a name in catalogue order, "Surname, Forename" with an
// occasional middle initial.
func (l *library) personName() string {
	name := pick(l.rng, surnames) + ", " + pick(l.rng, forenames)
	if l.rng.IntN(4) == 0 {
		name += " " + string(rune('A'+l.rng.IntN(26))) + "."
	}
	return name
}

// year returns a publication year from..2025, most of them recent.
func (l *library) year(from int) int {
	y := 2025 - int(l.rng.ExpFloat64()*12)
	return max(y, from)
}

func (l *library) price(typ int64) int {
	switch typ {
	case typeDVD:
		return (10+l.rng.IntN(15))*100 - 1
	case typeRef:
		return (45+l.rng.IntN(75))*100 - 1
	}
	return (12+l.rng.IntN(24))*100 - 1
}

// publisherIndex numbers the publishers for their ISBN prefixes.
func (l *library) publisherIndex(name string) int {
	i := 0
	for _, list := range [][]string{publishers, childrenPublishers, referencePublishers} {
		for _, p := range list {
			if p == name {
				return i
			}
			i++
		}
	}
	return 0
}

// pick returns a random element of list.
func pick[T any](rng interface{ IntN(int) int }, list []T) T {
	return list[rng.IntN(len(list))]
}

// The demo's shelving locations, one per part of each branch.
const (
	locAdultFiction    = "Adult fiction"
	locAdultNonFiction = "Adult non-fiction"
	locChildren        = "Children"
	locReference       = "Reference"
	locDVDs            = "DVDs"
)

// shelvingLocation is where a copy with the call number is shelved, read from
// the call number's prefix as a library shelves by it: J FIC in Children, REF in
// Reference, FIC and SF in adult fiction, DVD with the DVDs, and the rest
// (Dewey numbers, B biographies) in adult non-fiction. Drawn from no random
// number, so the rest of the demo is the same as before locations.
func shelvingLocation(callNumber string) string {
	switch prefix, _, _ := strings.Cut(callNumber, " "); prefix {
	case "J":
		return locChildren
	case "REF":
		return locReference
	case "FIC", "SF":
		return locAdultFiction
	case "DVD":
		return locDVDs
	}
	return locAdultNonFiction
}
