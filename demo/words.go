package demo

// Word lists for the generated catalogue and patrons. They are invented or generic on
// purpose: no real book is implied. None of them contains "left", "hand" or "dark"
// (which the porter stemmer makes of "darkness"), so that a search for "left hand of
// darkness" finds the fixture title I00010 and nothing near it.

var titleAdjectives = []string{
	"Silent", "Hidden", "Burning", "Golden", "Silver", "Broken", "Distant", "Quiet",
	"Wild", "Frozen", "Forgotten", "Lost", "Secret", "Scarlet", "Crimson", "Hollow",
	"Painted", "Winter", "Lonely", "Bright", "Long", "Last", "Little", "Invisible",
	"Shattered", "Wandering", "Restless", "Gentle", "Bitter", "Sweet", "Northern",
	"Southern", "Salt", "Glass", "Iron", "Paper", "Velvet", "Copper", "Midnight",
	"Summer", "Drowned", "Sleeping", "Orchard", "Borrowed", "Unfinished", "Vanishing",
	"Blue", "Green", "Amber", "Open", "Narrow", "Endless", "Second", "Final",
}

var titleNouns = []string{
	"Orchard", "Lighthouse", "River", "Garden", "Harbor", "Mirror", "Lantern", "Island",
	"Bridge", "Clockmaker", "Cartographer", "Station", "Meadow", "Tide", "Ember",
	"Compass", "Violin", "Archive", "Forest", "Mountain", "Storm", "Sparrow", "Fox",
	"Raven", "Orchid", "Tower", "Valley", "Signal", "Ferry", "Cottage", "Letter", "Map",
	"Key", "Crown", "Silence", "Shore", "Ocean", "Moon", "Salt Road", "Honeycomb",
	"Stone", "Thread", "Needle", "Weaver", "Beekeeper", "Gardener", "Widow", "Stranger",
	"Physician", "Astronomer", "Botanist", "Inheritance", "Promise", "Morning", "Evening",
	"Ferryman", "Glassblower", "Watchmaker", "Locksmith", "Apprentice", "Heiress",
	"Cellist", "Navigator", "Archivist", "Lamplighter", "Chapel", "Vineyard", "Canal",
	"Quarry", "Observatory", "Greenhouse", "Bookshop", "Boarding House", "Estuary",
}

var titlePlurals = []string{
	"Swallows", "Lanterns", "Islands", "Tides", "Embers", "Orchards", "Strangers",
	"Rivers", "Bells", "Seasons", "Storms", "Sisters", "Daughters", "Sons", "Ghosts",
	"Winters", "Mirrors", "Letters", "Promises", "Mountains", "Wolves", "Birds",
	"Secrets", "Maps", "Keys", "Stars", "Bridges", "Gardens", "Hours", "Echoes",
}

var titlePlaces = []string{
	"Lisbon", "Kyoto", "the North", "Marrakesh", "Prague", "the Delta", "Cape Farewell",
	"Dover", "Vienna", "the Steppe", "Lagos", "Montreal", "Patagonia", "Trieste",
	"Galway", "Odessa", "the Fens", "Zanzibar", "Valparaíso", "Bruges", "the Hebrides",
	"Samarkand", "the Outer Banks", "Havana", "St. Petersburg", "Alexandria", "Tangier",
	"Lake Geneva", "the Yukon", "Cornwall", "Naples", "the Highlands", "Reykjavík",
}

var fictionTemplates = []string{
	"The %[1]s %[2]s",
	"The %[2]s of %[4]s",
	"%[3]s of %[4]s",
	"The %[2]s's Daughter",
	"A %[2]s in %[4]s",
	"The Last %[2]s",
	"%[1]s %[3]s",
	"Under the %[1]s %[2]s",
	"Beyond the %[2]s",
	"Letters from %[4]s",
	"The %[2]s and the %[5]s",
	"All the %[1]s %[3]s",
	"When the %[2]s Falls",
	"The House by the %[2]s",
	"A %[1]s Season",
	"The %[2]s Keeper",
	"Return to %[4]s",
	"The %[1]s Year",
	"Where the %[3]s Go",
	"Song of the %[2]s",
}

var juvenileNouns = []string{
	"Dragon", "Bear", "Pirate", "Robot", "Rabbit", "Penguin", "Dinosaur", "Owl",
	"Mouse", "Unicorn", "Tiger", "Hedgehog", "Giant", "Wizard", "Otter", "Puppy",
	"Kitten", "Monster", "Squirrel", "Whale",
}

var juvenileTemplates = []string{
	"The %[1]s Who %[3]s",
	"%[2]s and the %[1]s",
	"The Very %[4]s %[1]s",
	"%[2]s Saves the Day",
	"Where Is %[2]s's %[1]s?",
	"The %[1]s Club",
	"A %[1]s Called %[2]s",
	"The %[4]s %[1]s Goes to School",
}

var juvenileVerbs = []string{
	"Wanted to Fly", "Could Not Sleep", "Lost Its Roar", "Loved Books", "Ate the Moon",
	"Came to Tea", "Built a Rocket", "Hated Baths", "Counted Stars", "Learned to Swim",
}

var juvenileAdjectives = []string{
	"Hungry", "Brave", "Sleepy", "Grumpy", "Tiny", "Clever", "Noisy", "Curious",
	"Busy", "Shy", "Messy", "Polite",
}

// Subjects, in the style of Library of Congress subject headings.

var fictionGenres = []string{
	"Detective and mystery stories", "Science fiction", "Fantasy fiction",
	"Historical fiction", "Love stories", "Domestic fiction", "Psychological fiction",
	"Thrillers (Fiction)", "Humorous fiction", "Short stories", "Adventure stories",
	"Gothic fiction", "Bildungsromans",
}

var fictionTopics = []string{
	"Families", "Sisters", "Brothers", "Friendship", "Islands", "Lighthouses",
	"Small towns", "Murder -- Investigation", "Missing persons", "Time travel",
	"Space colonies", "Dragons", "Magic", "Private investigators", "Orphans", "Widows",
	"Artists", "Musicians", "Inheritance and succession", "Ship captains", "Marriage",
	"Grief", "Immigrants", "Country life", "Sea stories", "Family secrets",
	"Mothers and daughters", "Fathers and sons", "Coming of age", "Villages",
}

var juvenileTopics = []string{
	"Dogs", "Cats", "Dragons", "Friendship", "Schools", "Pirates", "Bears",
	"Adventure and adventurers", "Bedtime", "Animals", "Dinosaurs", "Robots",
	"Families", "Sharing",
}

// topic is a field of non-fiction: its subject heading, its Dewey class for the call
// number, and phrases that titles are made of.
type topic struct {
	subject string
	dewey   string
	phrases []string
}

var topics = []topic{
	{"Cooking", "641.5", []string{"Cooking", "Home Baking", "Soups and Stews", "Vegetarian Cooking", "the Family Kitchen", "Bread"}},
	{"Gardening", "635", []string{"Gardening", "Small Gardens", "Vegetable Growing", "Container Gardening", "Roses", "the Kitchen Garden"}},
	{"Birds -- Identification", "598", []string{"Birdwatching", "Garden Birds", "Birds of Prey", "Seabirds", "Owls"}},
	{"World War, 1939-1945", "940.53", []string{"the Second World War", "the Home Front", "the Atlantic Convoys", "the Resistance"}},
	{"Astronomy", "520", []string{"the Night Sky", "Stargazing", "the Planets", "Telescopes", "the Moon"}},
	{"Computer programming", "005.13", []string{"Programming", "Algorithms", "Software Design", "Databases", "Python"}},
	{"Finance, Personal", "332.024", []string{"Personal Finance", "Saving and Investing", "Household Budgets", "Retirement Planning"}},
	{"Mindfulness (Psychology)", "158.1", []string{"Mindfulness", "Calm", "Habits", "Better Sleep", "Happiness"}},
	{"Architecture -- History", "720.9", []string{"Architecture", "Cathedrals", "Modern Houses", "Bridges and Towers"}},
	{"Music -- History and criticism", "780.9", []string{"Jazz", "the Symphony", "Folk Music", "the Blues", "Opera"}},
	{"Art -- History", "709", []string{"Painting", "Impressionism", "Sculpture", "Renaissance Art", "Drawing"}},
	{"Natural history", "508", []string{"the Seashore", "Woodland Life", "Wild Flowers", "the Hedgerow", "Insects"}},
	{"Voyages and travels", "910.4", []string{"Travel", "Rail Journeys", "Walking Holidays", "Island Hopping"}},
	{"Parenting", "649.1", []string{"Parenting", "the Toddler Years", "Raising Teenagers", "Family Life"}},
	{"Health", "613", []string{"Healthy Eating", "Running", "Strength Training", "Yoga", "Walking"}},
	{"Philosophy", "100", []string{"Philosophy", "Ethics", "Stoicism", "Logic", "Free Will"}},
	{"Economics", "330", []string{"Economics", "Markets", "Trade", "Inequality", "Money"}},
	{"Climatic changes", "363.738", []string{"Climate Change", "Renewable Energy", "the Oceans", "Weather"}},
	{"Mathematics -- Popular works", "510", []string{"Numbers", "Geometry", "Probability", "Statistics", "Infinity"}},
	{"Local history", "942", []string{"the Old Town", "the Canal", "the Mills", "the Railway", "the Market Square"}},
	{"Woodwork", "684.08", []string{"Woodworking", "Furniture Making", "Carpentry"}},
	{"Photography", "770", []string{"Photography", "Portraits", "Landscape Photography", "the Camera"}},
	{"Dogs", "636.7", []string{"Dogs", "Puppy Training", "Working Dogs"}},
	{"Chess", "794.1", []string{"Chess", "Chess Openings", "the Endgame"}},
}

var nonfictionTemplates = []string{
	"The Art of %s",
	"%s: A Practical Guide",
	"A Year of %s",
	"Everyday %s",
	"The Complete Book of %s",
	"%s for Beginners",
	"Notes on %s",
	"The Little Book of %s",
	"Understanding %s",
	"A Short History of %s",
	"The New Guide to %s",
	"Discovering %s",
	"%s Made Simple",
	"Thinking About %s",
	"The Story of %s",
	"Ten Lessons in %s",
}

var referenceTemplates = []string{
	"The Encyclopedia of %s",
	"A Dictionary of %s",
	"The Reference Guide to %s",
	"The Concise Encyclopedia of %s",
	"Who's Who in %s",
	"The Annual Directory of %s",
}

var biographyTemplates = []string{
	"%s: A Life",
	"The Life of %s",
	"%s: The Early Years",
	"Becoming %s",
}

var filmGenres = []string{
	"Feature films", "Comedy films", "Drama", "Documentary films", "Animated films",
	"Thrillers (Motion pictures)", "Science fiction films", "Musical films",
}

var publishers = []string{
	"Northgate Press", "Riverbend Books", "Meridian House", "Blue Heron Publishing",
	"Ashford & Lowe", "Larkspur Books", "Cobalt Editions", "Kestrel Press",
	"Old Mill Publishing", "Harrow & Finch", "Lamplight Books", "Greywether Press",
	"Tidewater Books", "Saltmarsh Publishing", "Quarry Hill Press", "Bellwether & Sons",
	"Fieldfare Editions", "Marlow House", "Copper Beech Books", "Westwind Press",
}

var childrenPublishers = []string{"Little Acorn Books", "Puddle Lane Press", "Kite Tail Books"}

var referencePublishers = []string{"Atlas & Index Press", "Scholar's Reference", "Bancroft Reference"}

var studios = []string{
	"Silverline Pictures", "Lantern Films", "Harbour Light Studios", "Northern Reel",
	"Kite Pictures", "Blue Door Films",
}

// People. Surnames leave out the fixture patrons' surnames (Reader, Owing, Waiting,
// Expired, Barred), so a search for a fixture patron finds one patron.

var forenames = []string{
	"Aisha", "Alan", "Amara", "Amelia", "Andrew", "Anna", "Arjun", "Ben", "Bianca",
	"Carlos", "Catherine", "Chen", "Chloe", "Daniel", "David", "Deepa", "Eleanor",
	"Elena", "Elijah", "Emma", "Ethan", "Fatima", "Felix", "Frances", "Gabriel", "Grace",
	"Hannah", "Harold", "Hiroshi", "Imogen", "Isaac", "Isabel", "Jack", "James", "Jamal",
	"Jane", "Joanna", "John", "Jonah", "Julia", "Kai", "Katherine", "Kofi", "Laura",
	"Leo", "Lina", "Lucas", "Lucy", "Maria", "Mark", "Marta", "Matthew", "Maya", "Mei",
	"Michael", "Mohammed", "Nadia", "Naomi", "Nathan", "Nina", "Noah", "Olivia", "Omar",
	"Oscar", "Paul", "Priya", "Rachel", "Rafael", "Rosa", "Ruth", "Samuel", "Sara",
	"Sean", "Sofia", "Stefan", "Susan", "Thomas", "Tomás", "Victoria", "Wei", "William",
	"Yusuf", "Zara", "Zoe",
}

var surnames = []string{
	"Abbott", "Adeyemi", "Ahmed", "Alvarez", "Andersen", "Bailey", "Baker", "Banerjee",
	"Bennett", "Bianchi", "Brennan", "Brooks", "Campbell", "Carter", "Castillo", "Chen",
	"Clarke", "Cohen", "Collins", "Costa", "Davies", "Dubois", "Edwards", "Evans",
	"Fernandes", "Fischer", "Fitzgerald", "Foster", "Garcia", "Gallagher", "Green",
	"Gupta", "Hall", "Hansen", "Harris", "Hayes", "Hughes", "Ibrahim", "Jackson",
	"Jensen", "Johnson", "Kaur", "Kelly", "Khan", "Kim", "Kowalski", "Larsen", "Lee",
	"Lewis", "Lindqvist", "Lopez", "MacDonald", "Martin", "Mendes", "Meyer", "Mitchell",
	"Moreau", "Morgan", "Murphy", "Nakamura", "Nguyen", "Novak", "O'Brien", "Okafor",
	"Olsen", "Owens", "Patel", "Perez", "Petrov", "Phillips", "Quinn", "Rahman", "Reyes",
	"Richards", "Roberts", "Romero", "Rossi", "Russell", "Santos", "Schmidt", "Shah",
	"Silva", "Singh", "Sullivan", "Suzuki", "Taylor", "Thompson", "Torres", "Tran",
	"Turner", "Walker", "Wang", "Watson", "Weber", "Williams", "Wilson", "Wright",
	"Yamamoto", "Young", "Zhang",
}

var streets = []string{
	"Maple Avenue", "Elm Street", "Station Road", "Church Lane", "Mill Road", "High Street",
	"Park View", "Orchard Close", "Victoria Road", "Riverside Walk", "Oak Drive",
	"Cedar Court", "Harbour Street", "Market Place", "Willow Crescent", "Queen's Road",
	"Chestnut Grove", "Bridge Street", "Meadow Way", "Hillside Terrace",
}

// towns are where a branch's patrons mostly live, by branch id.
var towns = map[int64][]string{
	branchCEN: {"Centre Town", "Old Quarter"},
	branchEAS: {"Eastfield", "Marsh End"},
	branchWES: {"Westbrook", "Hilltop"},
}

var blockNotes = []string{
	"Card reported stolen; check identity before lending.",
	"Mail returned undelivered; ask for a current address.",
	"Unpaid replacement charge for a lost item; see the branch manager.",
	"Items returned damaged twice; see the branch manager before lending.",
	"Abusive behaviour at the desk; see the branch manager.",
}

var patronNotes = []string{
	"Prefers reminders by phone.",
	"Large-print reader.",
	"Home delivery service on Thursdays.",
	"Book club member (Tuesday evening group).",
	"Volunteer at the homework club.",
	"Interlibrary loan requests: ask for the reference librarian.",
}
