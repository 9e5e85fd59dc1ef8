package web

import (
	"context"
	"net/http"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
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

// codesService is what the page of branches and types needs: catalog.Service
// owns the page (its item types), reading and adding the branches and patron
// categories beside them in the same transactions.
type codesService interface {
	Codes(ctx context.Context) (catalog.Codes, error)
	AddCode(ctx context.Context, actor stacks.Actor, kind, code, name string, notForLoan bool) error
	SetItemTypePrice(ctx context.Context, actor stacks.Actor, code string, cents int64) error
	SaveChargeType(ctx context.Context, actor stacks.Actor, t patrons.ChargeType) error
}

func (s *Server) renderAdminCodes(w http.ResponseWriter, r *http.Request, status int, change func(*AdminCodesView)) {
	c, err := s.Catalog.Codes(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := AdminCodesView{Branches: c.Branches, Categories: c.Categories, ItemTypes: c.ItemTypes,
		ItemTypePrices: c.ItemTypePrices, ChargeTypes: c.ChargeTypes, Typed: map[string]string{}, Errors: FormErrors{}}
	if change != nil {
		change(&v)
	}
	s.Render(w, r, status, AdminCodesPage(s.page(r, "Branches and types", "admin"), &v))
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
	err := s.Catalog.AddCode(r.Context(), actor, kind, code, name, r.PostFormValue("not_for_loan") == "1")
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
	s.Flash(r, "ok", map[string]string{
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
		"Replacement cost saved.", func(ctx context.Context, actor stacks.Actor) error {
			cents, ok := parseMoney(amount)
			if !ok {
				return stacks.FieldErrorf("item_type_price", stacks.EINVALID, "Enter the replacement cost, like 25.00.")
			}
			return s.Catalog.SetItemTypePrice(ctx, actor, code, cents)
		})
}

// handleAdminChargeType adds or changes a manual charge type.
func (s *Server) handleAdminChargeType(w http.ResponseWriter, r *http.Request) {
	code, desc, amount := r.PostFormValue("code"), r.PostFormValue("description"), r.PostFormValue("default")
	s.adminCodesWrite(w, r, map[string]string{"charge_type": code, "charge_type_description": desc, "charge_type_default": amount},
		"Charge type saved.", func(ctx context.Context, actor stacks.Actor) error {
			cents := int64(0)
			if amount != "" {
				var ok bool
				if cents, ok = parseMoney(amount); !ok {
					return stacks.FieldErrorf("default", stacks.EINVALID, "Enter the default amount, like 2.00, or 0 for none.")
				}
			}
			return s.Catalog.SaveChargeType(ctx, actor, patrons.ChargeType{Code: code, Description: desc, DefaultCents: cents})
		})
}

// adminCodesWrite runs one of the codes page's money forms: a refused field shows
// the page again (422) with typed values back and the message keyed by the
// form's field ids; success flashes ok and goes back to the page.
func (s *Server) adminCodesWrite(w http.ResponseWriter, r *http.Request, typed map[string]string, ok string,
	do func(ctx context.Context, actor stacks.Actor) error) {
	err := do(r.Context(), userFrom(r.Context()).Actor())
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
	s.Flash(r, "ok", ok)
	redirect(w, r, "/admin/codes", http.StatusSeeOther)
}
