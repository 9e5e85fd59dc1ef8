package opac

import "net/http"

func (s *Server) handleOAI(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "OAI-PMH is not served yet.", http.StatusNotImplemented)
}
