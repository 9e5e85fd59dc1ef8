package web

import (
	"net/http"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// AdminCodesView is the page of branches, patron categories and item types, with
// a form adding one of each.
type AdminCodesView struct {
	Branches []library.Branch
	// Categories come with how long their cards are valid (a renewal adds as much).
	Categories []patrons.Category
	ItemTypes  []library.Named
	// ItemTypePrices are the item types' default replacement costs, by code.
	ItemTypePrices map[string]int64
	// ChargeTypes are the configured manual charges.
	ChargeTypes []patrons.ChargeType
	// Typed holds what was typed into a refused form, by field id ("branch",
	// "branch_name", "category", ...); Errors the message, by the same ids.
	Typed  map[string]string
	Errors FormErrors
}

func (s *Server) renderAdminCodes(w http.ResponseWriter, r *http.Request, status int, change func(*AdminCodesView)) {
	v := AdminCodesView{Typed: map[string]string{}, Errors: FormErrors{}}
	err := s.DB.Read(r.Context(), func(tx *db.Tx) (err error) {
		if v.Branches, err = library.ListBranches(tx); err != nil {
			return err
		}
		if v.Categories, err = patrons.ListCategories(tx); err != nil {
			return err
		}
		if _, v.ItemTypes, err = library.ListScopes(tx); err != nil {
			return err
		}
		if v.ItemTypePrices, err = catalog.ItemTypePrices(tx); err != nil {
			return err
		}
		v.ChargeTypes, err = patrons.ChargeTypes(tx)
		return err
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if change != nil {
		change(&v)
	}
	s.render(w, r, status, AdminCodesPage(s.page(r, "Branches and types", "admin"), &v))
}

func (s *Server) handleAdminCodes(w http.ResponseWriter, r *http.Request) {
	s.renderAdminCodes(w, r, http.StatusOK, nil)
}

// handleAdminCodeAdd returns the handler adding a branch, a patron category or
// an item type (kind: branch, category or item-type).
func (s *Server) handleAdminCodeAdd(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.adminCodeAdd(w, r, kind) }
}

func (s *Server) adminCodeAdd(w http.ResponseWriter, r *http.Request, kind string) {
	field := map[string]string{"branch": "branch", "category": "category", "item-type": "item_type"}[kind]
	code, name := r.PostFormValue("code"), r.PostFormValue("name")
	actor := userFrom(r.Context()).Actor()
	err := s.DB.Write(r.Context(), func(tx *db.Tx) error {
		var err error
		switch kind {
		case "branch":
			_, err = library.CreateBranch(tx, actor, code, name)
		case "category":
			_, err = patrons.CreateCategory(tx, actor, code, name)
		default:
			_, err = catalog.CreateItemType(tx, actor, code, name, r.PostFormValue("not_for_loan") == "1")
		}
		return err
	})
	if f := stacks.ErrorField(err); err != nil && f != "" {
		s.renderAdminCodes(w, r, http.StatusUnprocessableEntity, func(v *AdminCodesView) {
			v.Typed[field], v.Typed[field+"_name"] = code, name
			v.Errors[f] = stacks.ErrorMessage(err)
		})
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.flash(r, "ok", map[string]string{
		"branch":    "Branch added. Set its opening days and closing time in the Calendar.",
		"category":  "Patron category added. Circulation rules may now be set for it.",
		"item-type": "Item type added. Circulation rules may now be set for it.",
	}[kind])
	redirect(w, r, "/admin/codes", http.StatusSeeOther)
}

// handleAdminItemTypePrice sets an item type's default replacement cost.
func (s *Server) handleAdminItemTypePrice(w http.ResponseWriter, r *http.Request) {
	code, amount := r.PostFormValue("item_type"), r.PostFormValue("price")
	s.adminCodesWrite(w, r, map[string]string{"item_type_price_type": code, "item_type_price": amount},
		"Replacement cost saved.", func(tx *db.Tx, actor stacks.Actor) error {
			cents, ok := parseMoney(amount)
			if !ok {
				return stacks.FieldErrorf("item_type_price", stacks.EINVALID, "Enter the replacement cost, like 25.00.")
			}
			return catalog.SetItemTypePrice(tx, actor, code, cents)
		})
}

// handleAdminChargeType adds or changes a manual charge type.
func (s *Server) handleAdminChargeType(w http.ResponseWriter, r *http.Request) {
	code, desc, amount := r.PostFormValue("code"), r.PostFormValue("description"), r.PostFormValue("default")
	s.adminCodesWrite(w, r, map[string]string{"charge_type": code, "charge_type_description": desc, "charge_type_default": amount},
		"Charge type saved.", func(tx *db.Tx, actor stacks.Actor) error {
			cents := int64(0)
			if amount != "" {
				var ok bool
				if cents, ok = parseMoney(amount); !ok {
					return stacks.FieldErrorf("default", stacks.EINVALID, "Enter the default amount, like 2.00, or 0 for none.")
				}
			}
			return patrons.SaveChargeType(tx, actor, patrons.ChargeType{Code: code, Description: desc, DefaultCents: cents})
		})
}

// adminCodesWrite runs one of the codes page's money forms: a refused field shows
// the page again (422) with typed values back and the message keyed by the
// form's field ids; success flashes ok and goes back to the page.
func (s *Server) adminCodesWrite(w http.ResponseWriter, r *http.Request, typed map[string]string, ok string,
	do func(tx *db.Tx, actor stacks.Actor) error) {
	err := s.DB.Write(r.Context(), func(tx *db.Tx) error { return do(tx, userFrom(r.Context()).Actor()) })
	if f := stacks.ErrorField(err); err != nil && f != "" {
		s.renderAdminCodes(w, r, http.StatusUnprocessableEntity, func(v *AdminCodesView) {
			for k, val := range typed {
				v.Typed[k] = val
			}
			key := f
			switch f {
			case "code":
				key = "charge_type"
			case "description", "default":
				key = "charge_type_" + f
			}
			v.Errors[key] = stacks.ErrorMessage(err)
		})
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.flash(r, "ok", ok)
	redirect(w, r, "/admin/codes", http.StatusSeeOther)
}
