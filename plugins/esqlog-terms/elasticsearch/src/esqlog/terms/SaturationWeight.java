package esqlog.terms;

import java.io.IOException;
import java.util.List;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.similarities.Similarity.SimScorer;
import org.apache.lucene.util.BytesRef;

/** Lucene 9's Scorer over SaturationLeaf (the rest: SaturationWeightBase). */
final class SaturationWeight extends SaturationWeightBase {
    SaturationWeight(Query query, String field, List<BytesRef> terms, SimScorer sim) {
        super(query, field, terms, sim);
    }

    @Override
    public Scorer scorer(LeafReaderContext context) throws IOException {
        SaturationLeaf leaf = leaf(context);
        if (leaf == null) {
            return null;
        }
        return new Scorer(this) {
            @Override
            public int docID() {
                return leaf.docID();
            }

            @Override
            public DocIdSetIterator iterator() {
                return leaf.iterator();
            }

            @Override
            public float getMaxScore(int upTo) {
                return leaf.maxScore();
            }

            @Override
            public float score() throws IOException {
                return leaf.score();
            }
        };
    }
}
